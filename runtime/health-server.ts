/**
 * The small HTTP endpoint every Cairn daemon exposes on its own port:
 * /healthz (the process is alive and, for a leader, still renewing),
 * /readyz (caches synced / registered), /metrics (Prometheus text) and any
 * extra JSON routes (the agent's /status). Loopback by default.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Registry } from 'prom-client';

/** Probes and routes of a health server. */
export interface HealthServerOptions {
  host: string;
  port: number;
  registry: Registry;
  healthy(): boolean | string;
  ready(): boolean | string;
  /** Extra GET routes answering JSON. */
  json?: Record<string, () => unknown>;
}

/** A running health server. */
export interface HealthServer {
  url: string;
  close(): Promise<void>;
}

function probe(check: () => boolean | string) {
  return (_req: express.Request, res: express.Response) => {
    const result = check();
    if (result === true) res.type('text/plain').send('ok');
    else res.status(503).type('text/plain').send(typeof result === 'string' ? result : 'not ok');
  };
}

/** Starts the health server. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const app = express();
  app.get(['/healthz', '/livez'], probe(opts.healthy));
  app.get('/readyz', probe(opts.ready));
  app.get('/metrics', async (_req, res) => {
    res.type(opts.registry.contentType).send(await opts.registry.metrics());
  });
  for (const [path, fn] of Object.entries(opts.json ?? {})) app.get(path, (_req, res) => void res.json(fn()));
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(opts.port, opts.host, resolve));
  server.on('error', () => undefined); // a failed accept() once listening (EMFILE): the monitor is not worth the process
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
