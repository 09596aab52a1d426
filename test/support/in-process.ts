/**
 * An apiserver in this process over a throwaway etcd (kubebuilder's envtest
 * pattern), plus a @kubernetes/client-node KubeConfig for it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startApiServer, type ApiServerOptions, type RunningApiServer } from '../../apiserver/server.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../hack/etcd.js';
import { CRD_DIR } from './paths.js';

/** A running test environment. */
export interface TestEnv {
  etcd: ThrowawayEtcd;
  server: RunningApiServer;
  kubeconfig: k8s.KubeConfig;
  dataDir: string;
  /** The admin token, for raw HTTP requests. */
  token: string;
  /** Starts another apiserver over the same etcd (and data dir). */
  addServer(overrides?: Partial<ApiServerOptions>): Promise<RunningApiServer>;
  stop(): Promise<void>;
}

/**
 * Starts etcd and an apiserver on free loopback ports. `route` may put
 * something (a cuttable proxy) between the apiserver and etcd.
 */
export async function startTestEnv(overrides: Partial<ApiServerOptions> = {}, route?: (etcdEndpoint: string) => Promise<string>): Promise<TestEnv> {
  const etcd = await startThrowawayEtcd();
  const endpoint = route ? await route(etcd.endpoint) : etcd.endpoint;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-env-'));
  const extra: RunningApiServer[] = [];
  const opts = (o: Partial<ApiServerOptions>, i: number): ApiServerOptions => ({
    etcdEndpoints: [endpoint],
    dataDir,
    listen: '127.0.0.1',
    port: 0,
    insecureHttp: false,
    crdDir: CRD_DIR,
    kubeconfigPath: path.join(dataDir, `admin-${i}.kubeconfig`),
    compactionIntervalMs: 0,
    eventTtlSeconds: 3600,
    logLevel: 'error',
    ...o,
  });
  const server = await startApiServer(opts(overrides, 0));
  const kubeconfig = new k8s.KubeConfig();
  kubeconfig.loadFromFile(server.kubeconfigPath);
  return {
    etcd,
    server,
    kubeconfig,
    dataDir,
    token: kubeconfig.getCurrentUser()!.token!,
    async addServer(o = {}) {
      const s = await startApiServer(opts(o, extra.length + 1));
      extra.push(s);
      return s;
    },
    async stop() {
      for (const s of [...extra, server]) await s.close();
      await etcd.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A KubeConfig for another server of the same environment. */
export function kubeconfigFor(server: RunningApiServer): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(server.kubeconfigPath);
  return kc;
}
