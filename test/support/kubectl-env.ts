/**
 * The mocha hooks every kubectl end-to-end file shares: one `cairn server`
 * process, a kubectl with a fresh cache dir, a client-node KubeConfig and a
 * temp dir, all removed afterwards; the server's log tail on a failure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Kubectl } from './kubectl.js';
import { EXAMPLES_DIR } from './paths.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** What a test file uses; filled in by the `before` hook. */
export interface KubectlEnv {
  server: ServerProcess;
  kubectl: Kubectl;
  kc: k8s.KubeConfig;
  tmp: string;
}

/** Registers before/afterEach/after hooks in the current describe block. */
export function useKubectlEnv(tmpPrefix: string, opts: { applyDemoCluster?: boolean } = {}): KubectlEnv {
  const env = {} as KubectlEnv;
  before(async () => {
    env.server = await startServerProcess();
    env.kubectl = new Kubectl(env.server.kubeconfig);
    env.kc = new k8s.KubeConfig();
    env.kc.loadFromFile(env.server.kubeconfig);
    env.tmp = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
    if (opts.applyDemoCluster) await env.kubectl.ok(['apply', '-f', path.join(EXAMPLES_DIR, '00-cluster.yaml')]);
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed' && env.server) console.error(`--- cairn server log (tail) ---\n${env.server.logs().slice(-4000)}`);
  });
  after(async () => {
    env.kubectl?.cleanup();
    if (env.tmp) fs.rmSync(env.tmp, { recursive: true, force: true });
    await env.server?.cleanup();
  });
  return env;
}
