/**
 * Where a log request's bytes come from: the node's tunnel on this replica,
 * or the replica holding it (forward.ts). Both look alike to the handler:
 * a start offset, data, and an end that says whether the tunnel was lost.
 */
import { EventEmitter } from 'node:events';
import type { LogOptions, StreamEnd } from '../../api/tunnel.js';
import type { UserInfo } from '../auth/user.js';
import { forwardGet, type PeerCredentials } from './forward.js';
import type { TunnelStream } from './node-tunnel.js';
import type { InstanceTarget } from './instance-target.js';

/** The response header carrying the log file offset the body starts at. */
export const LOG_OFFSET_HEADER = 'x-cairn-log-offset';

/** Opens the log of the target with `opts`. */
export function openLogSource(t: InstanceTarget, opts: LogOptions, user: UserInfo, creds: PeerCredentials): TunnelStream {
  if ('local' in t.route) return t.route.local.openStream({ kind: 'log', namespace: t.namespace, name: t.name, log: opts });
  return new PeerLog(t.route.peer, logPath(t, opts), user, creds);
}

/** The URL of an instance's log with the options as query parameters. */
export function logPath(t: Pick<InstanceTarget, 'namespace' | 'name'>, opts: LogOptions): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts)) if (v !== undefined && v !== false) q.set(k, String(v));
  const query = q.toString();
  return `/apis/cairn.dev/v1alpha1/namespaces/${encodeURIComponent(t.namespace)}/instances/${encodeURIComponent(t.name)}/log${query ? `?${query}` : ''}`;
}

/** A log read through another replica. */
class PeerLog extends EventEmitter implements TunnelStream {
  private readonly abort: () => void;
  private ended = false;

  constructor(peer: string, path: string, user: UserInfo, creds: PeerCredentials) {
    super();
    const req = forwardGet(peer, path, user, creds);
    this.abort = req.abort;
    req.response.then(
      (res) => {
        if (res.statusCode !== 200) return void collect(res).then((body) => this.finish({ status: res.statusCode ?? 502, message: statusMessage(body) }, false));
        this.emit('start', Number(res.headers[LOG_OFFSET_HEADER] ?? 0));
        res.on('data', (chunk: Buffer) => this.emit('data', chunk));
        // A response cut short (its replica lost the tunnel, or died) is a lost tunnel: the follow resumes.
        res.on('close', () => this.finish(res.complete ? undefined : { status: 503, message: `the replica ${peer} holding the tunnel went away` }, !res.complete));
        res.on('error', () => undefined);
      },
      (err: Error) => this.finish({ status: 503, message: `the replica ${peer} holding the tunnel did not answer: ${err.message}` }, true),
    );
  }

  // A log takes no input.
  write(): boolean {
    return true;
  }

  // Ends like a stream through a local tunnel: 'end' at once, so the request reading it ends too.
  close(): void {
    this.finish(undefined, false);
    this.abort();
  }

  private finish(failure: StreamEnd | undefined, lost: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('end', failure, lost);
  }
}

function collect(res: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    res.on('data', (c: Buffer) => (body += c.toString()));
    res.on('end', () => resolve(body));
    res.on('error', () => resolve(body));
  });
}

function statusMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}
