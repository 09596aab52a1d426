/**
 * `cairn apiserver` as a child process for the benchmark. Unlike the test
 * harness's starter, the child handle is known before the server is up, so
 * a server that never becomes ready is still stopped by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { stopChild } from '../../apiserver/etcd/process.js';
import { CAIRN_BIN } from '../../test/support/paths.js';

/** A running (or starting) apiserver child. */
export interface BenchServer {
  child: ChildProcess;
  /** Resolves with the URL the server prints once it listens. */
  ready: Promise<string>;
  kubeconfig: string;
  logs(): string;
  /** SIGTERM (SIGKILL after 10 s) and wait for the exit. */
  stop(): Promise<void>;
}

/** Spawns `node [nodeArgs] bin/cairn.js apiserver` on a free loopback port over `etcdEndpoint`. */
export function spawnApiServer(etcdEndpoint: string, dataDir: string, nodeArgs: string[] = [], workers = 1): BenchServer {
  const args = [...nodeArgs, CAIRN_BIN, 'apiserver', '--etcd-endpoints', etcdEndpoint, '--data-dir', dataDir, '--listen', '127.0.0.1', '--port', '0', '--log-level', 'warn', '--workers', String(workers)];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const ready = new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the apiserver did not start in 30 s:\n${stderr}`)), 30_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening at (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the apiserver exited (${code ?? signal}):\n${stderr}`));
    });
  });
  ready.catch(() => undefined); // the caller awaits it; never an unhandled rejection
  return {
    child,
    ready,
    kubeconfig: path.join(dataDir, 'admin.kubeconfig'),
    logs: () => stderr,
    stop: () => stopChild(child, 10_000),
  };
}
