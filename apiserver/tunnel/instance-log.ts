/**
 * GET .../instances/<name>/log: an instance's output, read on its node
 * through the node's tunnel (pods/log's options: follow, tailLines,
 * sinceSeconds, previous). A follow whose tunnel drops waits for the agent
 * to reconnect (to any replica) and resumes at the byte it stopped at; if
 * the tunnel does not come back in time it ends with a line saying so.
 */
import type { ServerResponse } from 'node:http';
import type { LogOptions, StreamEnd } from '../../api/tunnel.js';
import { ApiError, badRequest } from '../errors.js';
import type { ApiContext, ApiRequest } from '../http/context.js';
import { firstValue, logFlag } from '../http/params.js';
import { sendError } from '../http/respond.js';
import { endWhenTokenEnds, type Security } from '../http/security.js';
import { STREAM_LIMIT_BYTES } from '../http/watch-budget.js';
import { FORWARDED_HEADER, type PeerCredentials } from './forward.js';
import { instanceTarget, type InstanceTarget } from './instance-target.js';
import { LOG_OFFSET_HEADER, openLogSource } from './log-source.js';
import type { TunnelStream } from './node-tunnel.js';
import type { Tunnels } from './tunnels.js';

/** How long a follow waits for a lost tunnel to come back. */
const RESUME_WAIT_MS = 15_000;
const RESUME_POLL_MS = 250;

/** What the log handler needs. */
export interface LogDeps {
  ctx: ApiContext;
  tunnels: Tunnels;
  peers: PeerCredentials;
  /** Who may: a follow ends when its token does. */
  security: Security;
}

const REASONS: Record<number, string> = { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 503: 'ServiceUnavailable' };

/** Serves one log request (already authenticated and authorized). */
export async function serveInstanceLog(deps: LogDeps, req: ApiRequest, res: ServerResponse, namespace: string, name: string): Promise<void> {
  const opts = logOptions(req.query);
  // A client may leave at any await, this handler's or before it (authentication, authorization): its 'close'
  // has then fired already, and a stream opened after it would follow the log for good with no reader.
  let clientGone = res.closed;
  let source: TunnelStream | undefined;
  res.once('close', () => {
    clientGone = true;
    source?.close();
  });
  if (opts.follow) endFollowWithToken(deps.security, req, res);
  let target = await instanceTarget(deps.ctx, deps.tunnels, req.headers, namespace, name, 'log');
  let offset: number | undefined;
  let sent = 0;
  for (;;) {
    if (clientGone) return void res.end();
    const resume = offset === undefined ? {} : { fromOffset: offset + sent };
    const current = (source = openLogSource(target, { ...opts, ...resume }, req.user, deps.peers));
    const end = await new Promise<{ failure?: StreamEnd; lost: boolean }>((resolve) => {
      current.on('start', (o) => {
        if (offset !== undefined) return;
        offset = o;
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', [LOG_OFFSET_HEADER]: String(o) });
        res.flushHeaders();
      });
      current.on('data', (chunk) => {
        if (offset === undefined) return; // before its Start: it would send the headers without the offset
        sent += chunk.length;
        res.write(chunk);
        // The tunnel cannot pause one stream: a client this far behind is cut off, as a watch is, not buffered for.
        if (res.writableLength > STREAM_LIMIT_BYTES && !res.destroyed) {
          deps.ctx.log.warn('a log reader fell too far behind; ending its stream', { instance: `${namespace}/${name}`, user: req.user.name, bufferedBytes: res.writableLength });
          deps.ctx.metrics.streamEvictions.inc({ kind: 'log' });
          res.destroy();
        }
      });
      current.on('end', (failure, lost) => resolve({ ...(failure ? { failure } : {}), lost }));
    });
    if (offset === undefined) return sendError(res, streamError(end.failure), deps.ctx.log);
    if (clientGone || (!end.failure && !end.lost)) return void res.end();
    if (!end.lost || !opts.follow) return cutShort(res, `\n[cairn] the log of instance ${namespace}/${name} ended early: ${end.failure?.message ?? `the tunnel of node ${target.node} closed`}\n`);
    // Forwarded here by another replica: cut the response so that replica, which the client is on, resumes it.
    if (req.headers[FORWARDED_HEADER]) return void res.destroy();
    const back = await waitForTunnel(deps, req, namespace, name, () => clientGone);
    if (!back) return void res.end(`\n[cairn] the log of instance ${namespace}/${name} ended: the tunnel of node ${target.node} closed and did not come back within ${RESUME_WAIT_MS / 1000} s; run the command again once its agent is back\n`);
    target = back;
  }
}

/** A follow, which may last for days, ends once its token no longer authenticates (revoked, deleted, expired). */
function endFollowWithToken(sec: Security, req: ApiRequest, res: ServerResponse): void {
  if (res.closed) return; // its client left already: no 'close' is to come to stop the check
  const stop = endWhenTokenEnds(sec, req.headers, (why) => (res.headersSent ? cutShort(res, `\n[cairn] the log follow ended: ${why}\n`) : res.destroy()));
  res.once('close', stop);
}

/**
 * Ends a log that broke after its first byte: a line saying why, then the connection cut without the
 * response's last chunk, so that a client sees an error, not a log that merely looks complete.
 */
function cutShort(res: ServerResponse, why: string): void {
  res.write(why, () => res.destroy());
}

async function waitForTunnel(deps: LogDeps, req: ApiRequest, namespace: string, name: string, cancelled: () => boolean): Promise<InstanceTarget | undefined> {
  for (const until = Date.now() + RESUME_WAIT_MS; Date.now() < until && !cancelled(); ) {
    await new Promise((r) => setTimeout(r, RESUME_POLL_MS));
    const t = await instanceTarget(deps.ctx, deps.tunnels, req.headers, namespace, name, 'log').catch(() => undefined);
    if (t) return t;
  }
  return undefined;
}

function streamError(failure: StreamEnd | undefined): ApiError {
  const f = failure ?? { status: 500, message: 'the node ended the log stream before sending anything' };
  return new ApiError(f.status, REASONS[f.status] ?? 'InternalError', f.message);
}

/** pods/log's query parameters, checked. */
export function logOptions(q: Record<string, unknown>): LogOptions {
  const flag = (k: string) => logFlag(q, k);
  const count = (k: string, min: number) => {
    const v = firstValue(q[k]);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || Number(v) < min) throw badRequest(`query parameter ${k}="${v}" must be a whole number of at least ${min}`);
    return Number(v);
  };
  const o: LogOptions = { follow: flag('follow'), tailLines: count('tailLines', 0), sinceSeconds: count('sinceSeconds', 1), previous: flag('previous'), fromOffset: count('fromOffset', 0) };
  if (o.previous && o.follow) throw badRequest('previous and follow cannot be combined: the earlier runs of an instance write nothing more');
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as LogOptions;
}
