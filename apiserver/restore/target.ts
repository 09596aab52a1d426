/**
 * The etcd a restore writes into: the embedded etcd of a `cairn server`
 * data dir (started for the restore on <data-dir>/etcd with the data dir
 * locked, as cairn server does, and stopped after), or external endpoints.
 */
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { loadEtcdCredentials, type EtcdTlsFiles } from '../etcd/client-tls.js';
import { lockDataDir } from '../etcd/data-dir-lock.js';
import { startEtcd } from '../etcd/process.js';

/** Where to restore into. */
export type RestoreTarget = { dataDir: string } | { endpoints: string[]; tls: EtcdTlsFiles };

/** Runs `fn` with a client of the target etcd; stops what it started, whatever happens. */
export async function withRestoreTarget<T>(target: RestoreTarget, fn: (client: Etcd3, where: string) => Promise<T>): Promise<T> {
  if ('endpoints' in target) {
    const client = new Etcd3({ hosts: target.endpoints, credentials: loadEtcdCredentials(target.tls, target.endpoints) });
    try {
      return await fn(client, `etcd at ${target.endpoints.join(', ')}`);
    } finally {
      client.close();
    }
  }
  // Refuses (naming the holder) while a cairn server runs on the data dir.
  const unlock = lockDataDir(target.dataDir);
  const etcdDir = path.join(target.dataDir, 'etcd');
  try {
    const etcd = await startEtcd({ dataDir: etcdDir, logFile: path.join(target.dataDir, 'etcd.log') });
    const client = new Etcd3({ hosts: etcd.endpoint });
    try {
      return await fn(client, `the embedded etcd of ${target.dataDir} (${etcdDir})`);
    } finally {
      client.close();
      await etcd.stop(10_000);
    }
  } finally {
    unlock();
  }
}
