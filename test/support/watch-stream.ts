/**
 * A raw watch stream over HTTPS that collects events, for tests that check
 * exactly which events arrive and in what order.
 */
import type http from 'node:http';
import https from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/** One watch event as sent on the wire. */
export interface WireEvent {
  type: string;
  object: any;
}

/** An open watch. */
export interface WatchStream {
  events: WireEvent[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
  /** Waits until `pred` holds for the events so far. */
  until(pred: (events: WireEvent[]) => boolean, timeoutMs?: number): Promise<void>;
}

/** `GET path` on the kubeconfig's server, with its CA and bearer token. */
export function kubeGet(kc: k8s.KubeConfig, path: string, headers: Record<string, string>, onResponse: (res: http.IncomingMessage) => void): http.ClientRequest {
  const cluster = kc.getCurrentCluster()!;
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
  return https.get(new URL(path, cluster.server), { ca, headers: { authorization: `Bearer ${kc.getCurrentUser()!.token}`, ...headers } }, onResponse);
}

/** Calls `fn` with each non-empty line of a streamed response (one watch event each). */
export function onLines(res: http.IncomingMessage, fn: (line: string) => void): void {
  let buf = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) fn(line);
    }
  });
}

/** Opens `GET path` (which should include `watch=true`) on the kubeconfig's server. */
export function openWatch(kc: k8s.KubeConfig, path: string, headers: Record<string, string> = {}): Promise<WatchStream> {
  const events: WireEvent[] = [];
  return new Promise((resolve, reject) => {
    let endResolve: () => void = () => undefined;
    const ended = new Promise<void>((r) => (endResolve = r));
    const req = kubeGet(kc, path, headers, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch ${path}: HTTP ${res.statusCode}`));
      onLines(res, (line) => events.push(JSON.parse(line) as WireEvent));
      res.on('end', endResolve);
      res.on('close', endResolve);
      resolve({
        events,
        ended,
        close: () => req.destroy(),
        async until(pred, timeoutMs = 20_000) {
          const deadline = Date.now() + timeoutMs;
          while (!pred(events)) {
            if (Date.now() > deadline) throw new Error(`watch ${path}: condition not met; got ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))}`);
            await new Promise((r) => setTimeout(r, 20));
          }
        },
      });
    });
    req.on('error', (err) => {
      endResolve();
      reject(err);
    });
  });
}
