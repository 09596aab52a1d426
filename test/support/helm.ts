/**
 * Runs the real Helm 3 binary (hack/install-helm.sh puts it at
 * ~/.cache/cairn/helm/helm, or $CAIRN_HELM) against a test server, with
 * its own cache, config and data dirs so no user setting leaks in.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HELM_BIN } from '../../hack/helm.js';
import { runProcess, type ProcessResult } from './run-process.js';

/** A Helm bound to one kubeconfig. */
export class Helm {
  private readonly home = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-helm-'));

  constructor(private readonly kubeconfig: string) {}

  /** Runs `helm args...` with extra environment (HELM_DRIVER, say); never throws on a non-zero exit. */
  run(args: string[], env: Record<string, string> = {}): Promise<ProcessResult> {
    const dirs = { HELM_CACHE_HOME: path.join(this.home, 'cache'), HELM_CONFIG_HOME: path.join(this.home, 'config'), HELM_DATA_HOME: path.join(this.home, 'data') };
    return runProcess(HELM_BIN, ['--kubeconfig', this.kubeconfig, ...args], { env: { ...process.env, ...dirs, ...env }, timeoutMs: 120_000 });
  }

  /** Runs and throws with Helm's output when it fails. */
  async ok(args: string[], env: Record<string, string> = {}): Promise<string> {
    const r = await this.run(args, env);
    if (r.code !== 0) throw new Error(`helm ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  cleanup(): void {
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}
