/**
 * Runs the apiserver as N worker processes sharing one listening port
 * (node:cluster), so a machine's cores all serve requests: the apiserver is
 * stateless and each worker keeps its own watch cache. The primary prepares
 * the certificates and token once (so workers never race to create them),
 * restarts a worker that dies, and stops them all on shutdown. The primary
 * also owns the audit log file: workers send it their entries over IPC.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'winston';
import { openAuditLog } from './audit/audit-log.js';
import { auditEntryOf } from './audit/audit-forwarding.js';
import { ensureAdminCredentials } from './auth/tokens.js';
import { explainEtcdFailure } from './etcd/client-tls.js';
import { WORKER_OPTIONS_ENV } from './options.js';
import { ensurePki } from './pki.js';
import { serverHosts, startApiServer, type ApiServerOptions, type RunningApiServer } from './server.js';
import path from 'node:path';

const READY = 'cairn-apiserver-ready';

/** A pool of apiserver workers, as seen from the primary. */
export interface WorkerPool {
  url: string;
  kubeconfigPath: string;
  close(): Promise<void>;
}

/** In the primary: forks `n` workers and resolves once one is listening. In a worker: never called. */
export async function startWorkerPool(n: number, opts: ApiServerOptions, log: Logger): Promise<WorkerPool> {
  await ensurePki(path.join(opts.dataDir, 'pki'), { hosts: serverHosts(opts) });
  await ensureAdminCredentials(opts.dataDir);
  const audit = openAuditLog(opts.auditLog, log);
  let stopping = false;
  let started = false;
  let failures = 0;
  let first: ((v: { url: string; kubeconfigPath: string }) => void) | null = null;
  let fail: (err: Error) => void = () => undefined;
  const ready = new Promise<{ url: string; kubeconfigPath: string }>((resolve, reject) => {
    first = resolve;
    fail = reject;
  });
  const fork = (): Worker => {
    const worker = cluster.fork({ [WORKER_OPTIONS_ENV]: JSON.stringify(opts) });
    worker.on('message', (m: { type?: string; url: string; kubeconfigPath: string }) => {
      const entry = auditEntryOf(m);
      if (entry) audit.record(entry);
      else if (m?.type === READY) {
        started = true;
        first?.(m);
      }
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      // Workers that die before any has served are a configuration problem, not a crash to ride out.
      if (!started && ++failures >= n) return fail(new Error(`every apiserver worker exited before serving (last exit: ${code ?? signal}); see the log above`));
      log.error('apiserver worker exited; starting another', { pid: worker.process.pid, code, signal });
      forkLater();
    });
    // A fork that fails under pressure (EAGAIN, EMFILE) emits 'error' and no 'exit'; unheard, it would end the primary.
    worker.on('error', (err) => {
      log.error('apiserver worker failed', { pid: worker.process.pid, error: err.message });
      if (worker.process.pid === undefined && !stopping) forkLater();
    });
    return worker;
  };
  const forkLater = (): void => {
    setTimeout(() => {
      try {
        fork();
      } catch (err) {
        log.error('cannot start an apiserver worker; trying again', { error: (err as Error).message });
        forkLater();
      }
    }, 1000);
  };
  for (let i = 0; i < n; i++) fork();
  const { url, kubeconfigPath } = await ready.catch(async (err: unknown) => {
    await audit.close();
    throw err;
  });
  return {
    url,
    kubeconfigPath,
    async close() {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
      await Promise.all(workers.map((w) => new Promise<void>((resolve) => {
        if (w.isDead()) return resolve();
        w.once('exit', () => resolve());
        w.process.kill('SIGTERM');
      })));
      await audit.close();
    },
  };
}

/** True in a process forked by startWorkerPool. */
export function isApiServerWorker(): boolean {
  return cluster.isWorker && !!process.env[WORKER_OPTIONS_ENV];
}

/** The body of a worker: serve until SIGTERM, then close gracefully. */
export async function runApiServerWorker(): Promise<void> {
  const opts = JSON.parse(process.env[WORKER_OPTIONS_ENV]!) as ApiServerOptions;
  const server: RunningApiServer = await startApiServer(opts).catch((err: unknown) => {
    throw explainEtcdFailure(err, opts.etcdEndpoints, opts.etcdTls);
  });
  process.send?.({ type: READY, url: server.url, kubeconfigPath: server.kubeconfigPath });
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
  process.once('SIGINT', () => undefined); // the primary decides when workers stop
}
