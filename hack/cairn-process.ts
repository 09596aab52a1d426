/**
 * `cairn server` / `cairn apiserver` as a child process, for the end-to-end
 * tests and the benchmark. The child handle exists before the server is up,
 * so a server that never becomes ready is still stopped by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { packagePath } from '../api/package-files.js';
import { stopChild } from '../apiserver/etcd/process.js';

/** The `cairn` executable of this checkout (from dist/hack/), once its bundle is known to be current. */
export const CAIRN_BIN = currentBin();

// bin/cairn.js runs dist/bundle/ (hack/bundle.ts): after a bare tsc it would still run the code before it.
function currentBin(): string {
  const bundled = fs.statSync(packagePath('dist/bundle/main.js'), { throwIfNoEntry: false });
  const compiled = fs.statSync(packagePath('dist/cli/main.js'));
  if (!bundled || bundled.mtimeMs < compiled.mtimeMs) {
    throw new Error('dist/bundle/ is missing or older than dist/cli/: run `npm run build` (or `node dist/hack/bundle.js` after tsc)');
  }
  return packagePath('bin', 'cairn.js');
}

/** A running (or starting) server child. */
export interface CairnProcess {
  child: ChildProcess;
  /** Resolves with the URL the server prints once it listens. */
  ready: Promise<string>;
  logs(): string;
  /** SIGTERM (SIGKILL after 10 s) and wait for the exit. */
  stop(): Promise<void>;
}

/**
 * Spawns `node [nodeArgs] bin/cairn.js <args>` (in `env`, default this process's) and watches its stdout for the URL.
 * `launcher` prefixes the command (the chaos suite's `nsenter --net=…` runs it on a test host).
 */
export function spawnCairn(args: string[], nodeArgs: string[] = [], env: NodeJS.ProcessEnv = process.env, launcher: string[] = []): CairnProcess {
  const [cmd, ...pre] = [...launcher, process.execPath];
  const child = spawn(cmd!, [...pre, ...nodeArgs, CAIRN_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const ready = new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`cairn ${args[0]} did not start in 30 s:\n${stderr}`)), 30_000);
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
      reject(new Error(`cairn ${args[0]} exited (${code ?? signal}):\n${stderr}`));
    });
  });
  ready.catch(() => undefined); // the caller awaits it; never an unhandled rejection
  return { child, ready, logs: () => stderr, stop: () => stopChild(child, 10_000) };
}
