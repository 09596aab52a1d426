/**
 * `cairn logs instance NAME`: GETs the instance's log subresource (read on
 * its node through the agent's tunnel) and copies it to stdout; with -f
 * until the stream ends or the user interrupts.
 */
import http from 'node:http';
import https from 'node:https';
import type { RawConnection } from '../client/api-client.js';
import { refusal } from '../../api/client/http-exchange.js';
import type { ClientContext } from '../client/context.js';
import { untilInterrupted } from '../client/interrupt.js';
import { oneInstance } from '../client/kind-args.js';

/** Runs `cairn logs ARGS...`. */
export async function logs(ctx: ClientContext, args: string[]): Promise<number> {
  const { name } = oneInstance(await ctx.catalog(), args, 'logs', 'cairn logs instance NAME');
  const f = ctx.flags;
  const query = {
    ...(f.follow ? { follow: 'true' } : {}),
    ...(f.tail !== undefined ? { tailLines: String(f.tail) } : {}),
    ...(f.since !== undefined ? { sinceSeconds: String(Math.max(1, Math.ceil((f.since as number) / 1000))) } : {}),
    ...(f.previous ? { previous: 'true' } : {}),
  };
  const path = `/apis/cairn.dev/v1alpha1/namespaces/${encodeURIComponent(ctx.namespace)}/instances/${encodeURIComponent(name)}/log`;
  const res = await get(await ctx.rest.rawConnection(), path, query);
  const interrupted = untilInterrupted();
  try {
    const ended = new Promise<number>((resolve, reject) => {
      res.on('end', () => resolve(0));
      res.on('error', reject);
    });
    res.pipe(process.stdout, { end: false });
    return await Promise.race([ended, interrupted.done]);
  } finally {
    interrupted.dispose();
    res.destroy();
  }
}

/** GETs a streamed response; a refusal becomes the API's error (its Status message). */
async function get(conn: RawConnection, path: string, query: Record<string, string>): Promise<http.IncomingMessage> {
  const url = new URL(conn.server.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).get(url, { ...conn.tls, headers: conn.headers }, resolve);
    req.on('error', (err) => reject(new Error(`request to ${url.href} failed, reason: ${err.message}`)));
  });
  if (res.statusCode === 200) return res;
  throw await refusal(res);
}
