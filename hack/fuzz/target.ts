/**
 * The server a fuzz run hits: a throwaway etcd and `cairn apiserver` as a
 * separate process (its event loop is not the fuzzer's), with the fuzz
 * namespaces and a few objects in them to patch and delete.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnCairn, type CairnProcess } from '../cairn-process.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../etcd.js';
import { expectStatus, targetFromKubeconfig, type ApiTarget } from '../bench/lib.js';
import { FUZZ_NAMESPACES } from './requests.js';

/** A running apiserver to fuzz. */
export interface FuzzTarget {
  api: ApiTarget;
  pid: number;
  logs(): string;
  stop(): Promise<void>;
}

const GROUP = '/apis/cairn.dev/v1alpha1';

/** Starts etcd and an apiserver on free loopback ports, and seeds them. */
export async function startFuzzTarget(concurrency: number): Promise<FuzzTarget> {
  let etcd: ThrowawayEtcd | undefined;
  let server: CairnProcess | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-fuzz-'));
  const stop = async () => {
    await server?.stop();
    await etcd?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    etcd = await startThrowawayEtcd();
    server = spawnCairn(['apiserver', '--etcd-endpoints', etcd.endpoint, '--data-dir', dir, '--listen', '127.0.0.1', '--port', '0', '--log-level', 'error'], process.env.FUZZ_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.FUZZ_CPU_PROF}`] : []);
    await server.ready;
    const api = targetFromKubeconfig(path.join(dir, 'admin.kubeconfig'), concurrency);
    for (const ns of FUZZ_NAMESPACES) {
      await expectStatus(api, [201], 'POST', `${GROUP}/clusters`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: ns } });
      for (const name of ['x', 'a', 'target']) {
        await expectStatus(api, [201], 'POST', `${GROUP}/namespaces/${ns}/instances`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name }, spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } } });
      }
    }
    const s = server;
    return { api, pid: s.child.pid!, logs: () => s.logs(), stop: async () => (api.agent.destroy(), await stop()) };
  } catch (err) {
    await stop();
    throw err;
  }
}
