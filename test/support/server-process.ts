/**
 * Runs `cairn server` (or `cairn apiserver`) as a real child process on a
 * free loopback port with its own temp data dir, for end-to-end tests.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnCairn } from '../../hack/cairn-process.js';
import { killAndWait } from './run-process.js';

/** A running server process. */
export interface ServerProcess {
  url: string;
  kubeconfig: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  logs(): string;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL and wait. */
  kill9(): Promise<void>;
  /** Stops the process and removes its data dir (when the harness made it). */
  cleanup(): Promise<void>;
}

/** Options for a server process. */
export interface ServerProcessOptions {
  /** Reuse a data dir (a restart); default a new temp dir. */
  dataDir?: string;
  /** Serve over an external etcd with `cairn apiserver`. */
  etcdEndpoints?: string;
  /** Fixed port (a restart on the same address); default 0. */
  port?: number;
  kubeconfig?: string;
  extraArgs?: string[];
  /** Run the controller inside `cairn server` (default false: apiserver tests drive status themselves). */
  controller?: boolean;
  /** The server's environment (default this process's). */
  env?: NodeJS.ProcessEnv;
  /** Prefixes the command (`nsenter --net=…` runs the server on a chaos test host). */
  launcher?: string[];
}

/** Starts the server and resolves once it prints its URL. */
export async function startServerProcess(o: ServerProcessOptions = {}): Promise<ServerProcess> {
  const ownDir = !o.dataDir;
  const dataDir = o.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-e2e-'));
  const args = [o.etcdEndpoints ? 'apiserver' : 'server', '--data-dir', dataDir, '--port', String(o.port ?? 0), '--log-level', 'warn'];
  if (o.etcdEndpoints) args.push('--etcd-endpoints', o.etcdEndpoints);
  else if (!o.controller) args.push('--no-controller');
  if (o.kubeconfig) args.push('--kubeconfig', o.kubeconfig);
  args.push(...(o.extraArgs ?? []));
  const cairn = spawnCairn(args, [], o.env, o.launcher);
  let url: string;
  try {
    url = await cairn.ready;
  } catch (err) {
    await cairn.stop();
    if (ownDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const child = cairn.child;
  const kubeconfig = o.kubeconfig ?? path.join(dataDir, 'admin.kubeconfig');
  const proc: ServerProcess = {
    url,
    kubeconfig,
    dataDir,
    child,
    logs: cairn.logs,
    stop: cairn.stop,
    kill9: () => killAndWait(child),
    async cleanup() {
      await proc.stop();
      if (ownDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return proc;
}
