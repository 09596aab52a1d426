/**
 * A throwaway etcd for tests and benchmarks: a fresh temp dir, free loopback
 * ports, and everything removed on `cleanup()`. Nothing assumes a running etcd.
 * Also runnable: `node dist/hack/etcd.js` prints the endpoint and runs until
 * interrupted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEtcd, type EtcdProcess, type EtcdProcessOptions } from '../apiserver/etcd/process.js';

/** A running throwaway etcd and the way to remove it. */
export interface ThrowawayEtcd {
  endpoint: string;
  dir: string;
  /** The running member; replaced by restart(). */
  process: EtcdProcess;
  /** Stops etcd and starts it again on the same data dir and ports. */
  restart(): Promise<void>;
  cleanup(): Promise<void>;
}

/** Starts an etcd in a new temp dir on free loopback ports. */
export async function startThrowawayEtcd(opts: Pick<EtcdProcessOptions, 'quotaBackendBytes'> = {}): Promise<ThrowawayEtcd> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-etcd-'));
  const options = { ...opts, dataDir: path.join(dir, 'data'), logFile: path.join(dir, 'etcd.log') };
  const proc = await startEtcd(options);
  const etcd: ThrowawayEtcd = {
    endpoint: proc.endpoint,
    dir,
    process: proc,
    async restart() {
      await etcd.process.stop(2000);
      etcd.process = await startEtcd({ ...options, clientPort: proc.clientPort, peerPort: proc.peerPort });
    },
    async cleanup() {
      await etcd.process.stop(2000);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return etcd;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const etcd = await startThrowawayEtcd();
  console.log(etcd.endpoint);
  const stop = () => void etcd.cleanup().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
