/**
 * Runs the machine's stock kubectl against a test server, with a fresh
 * discovery cache dir per harness (kubectl caches discovery for 6 h).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess, type ProcessResult } from './run-process.js';

/** The outcome of one kubectl run. */
export type KubectlResult = ProcessResult;

/** A kubectl bound to one kubeconfig and cache dir. */
export class Kubectl {
  readonly cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-kubectl-cache-'));

  constructor(private readonly kubeconfig: string) {}

  /** Runs `kubectl args...`, optionally feeding `stdin` and with extra environment; never throws on a non-zero exit. */
  run(args: string[], opts: { stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<KubectlResult> {
    const { env, ...rest } = opts;
    return runProcess('kubectl', ['--kubeconfig', this.kubeconfig, '--cache-dir', this.cacheDir, ...args], { ...rest, ...(env ? { env: { ...process.env, ...env } } : {}) });
  }


  /** Runs and throws with kubectl's output when it fails. */
  async ok(args: string[], opts: { stdin?: string } = {}): Promise<string> {
    const r = await this.run(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** Removes the cache dir. */
  cleanup(): void {
    fs.rmSync(this.cacheDir, { recursive: true, force: true });
  }
}
