/**
 * Runs the machine's stock kubectl against a test server, with a fresh
 * discovery cache dir per harness (kubectl caches discovery for 6 h).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The outcome of one kubectl run. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A kubectl bound to one kubeconfig and cache dir. */
export class Kubectl {
  readonly cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-kubectl-cache-'));

  constructor(private readonly kubeconfig: string) {}

  /** Runs `kubectl args...`, optionally feeding `stdin`; never throws on a non-zero exit. */
  run(args: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, '--cache-dir', this.cacheDir, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
      child.stdin.end(opts.stdin ?? '');
    });
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
