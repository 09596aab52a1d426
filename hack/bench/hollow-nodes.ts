/**
 * Hollow nodes, as kubemark and kwok do it: one benchmark-only process that
 * plays N node agents through the real apiserver. It registers N Nodes
 * (Ready, with capacity), renews their heartbeat Leases, watches the
 * WorkItems of the cluster and marks each one Done (instance Running)
 * after a short delay — no real workloads. Prints "hollow nodes ready"
 * once every Node is registered.
 *
 *   node dist/hack/bench/hollow-nodes.js <kubeconfig> <cluster> <nodes> [delayMs]
 */
import { formatTime, setCondition } from '../../api/conditions.js';
import { CairnClient } from '../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../api/client/kubeconfig.js';
import { isConflict } from '../../api/client/errors.js';
import { createLogger } from '../../api/log.js';
import { GROUP, PLURALS, VERSION } from '../../api/types.js';
import type { WorkItem } from '../../api/workitem.js';
import { LeaseLock } from '../../runtime/lease-lock.js';
import { Informer } from '../../runtime/informer.js';
import { runConcurrent } from './lib.js';

const [kubeconfig, cluster, nodesArg, delayArg] = process.argv.slice(2);
if (!kubeconfig || !cluster || !nodesArg) throw new Error('usage: hollow-nodes.js <kubeconfig> <cluster> <nodes> [delayMs]');
const N = Number(nodesArg);
const DELAY_MS = Number(delayArg ?? 100);
const LEASE_SECONDS = 40;
const RENEW_MS = 10_000;

const log = createLogger('hollow-nodes', 'warn');
const kc = loadKubeConfig({ kubeconfig });
const client = new CairnClient(kc, 'hollow-nodes');
const names = Array.from({ length: N }, (_, i) => `hollow-${String(i).padStart(4, '0')}`);
const capacity = { cpus: 64, memory: '256Gi', storage: '4Ti' };

async function register(name: string): Promise<void> {
  const node = await client.create('Node', { metadata: { name, namespace: cluster, labels: { hollow: 'true' } }, spec: {} });
  const now = new Date();
  const conditions = setCondition(undefined, { type: 'Ready', status: 'True', reason: 'AgentReady', message: 'hollow node' }, now);
  await client.replaceStatus('Node', { ...node, status: { phase: 'Ready', capacity, allocatable: capacity, agentVersion: 'hollow', conditions } });
}

async function markDone(w: WorkItem): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const current = attempt === 0 ? w : await client.get('WorkItem', w.metadata.namespace, w.metadata.name!);
    if (!current || current.status?.observedGeneration === current.metadata.generation) return;
    const status = {
      observedGeneration: current.metadata.generation,
      phase: 'Done' as const,
      message: 'hollow',
      attempts: 0,
      instance: current.spec.type === 'InstanceRuntime' ? { state: 'Running' as const, ready: true, pid: 1, startedAt: formatTime(new Date()) } : undefined,
      volumeReplica: current.spec.type === 'VolumeReplica' ? { size: current.spec.volumeReplica!.size, path: '/hollow' } : undefined,
    };
    try {
      await client.replaceStatus('WorkItem', { ...current, status });
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}

async function releaseFinalizer(w: WorkItem): Promise<void> {
  const finalizers = (w.metadata.finalizers ?? []).filter((f) => f !== 'cairn.dev/agent');
  await client.patch('WorkItem', w.metadata.namespace, w.metadata.name!, { metadata: { finalizers, resourceVersion: w.metadata.resourceVersion } }).catch(() => undefined);
}

async function main(): Promise<void> {
  const reg = await runConcurrent(N, 32, (i) => register(names[i]!));
  if (reg.errors) throw new Error(`registering hollow nodes: ${reg.firstError}`);
  const locks = names.map((name) => new LeaseLock(kc, { namespace: cluster!, name: `node-${name}`, identity: name, leaseDurationSeconds: LEASE_SECONDS }));
  const renewAll = () => runConcurrent(locks.length, 32, (i) => locks[i]!.tryAcquireOrRenew().then(() => undefined));
  await renewAll();
  setInterval(() => void renewAll(), RENEW_MS);
  const informer = new Informer<WorkItem>(kc, { group: GROUP, version: VERSION, plural: PLURALS.WorkItem, namespace: cluster }, { log });
  const pending = new Set<string>();
  const handle = (w: WorkItem) => {
    const key = `${w.metadata.namespace}/${w.metadata.name}`;
    if (pending.has(key)) return;
    const work = w.metadata.deletionTimestamp ? () => releaseFinalizer(w) : w.status?.observedGeneration === w.metadata.generation ? undefined : () => markDone(w);
    if (!work) return;
    pending.add(key);
    setTimeout(() => void work().catch((err: unknown) => log.warn('hollow write failed', { error: String(err) })).finally(() => pending.delete(key)), DELAY_MS);
  };
  informer.addHandlers({ add: handle, update: (_o, w) => handle(w) });
  informer.start();
  await informer.waitForSync();
  process.stdout.write('hollow nodes ready\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`hollow-nodes: ${String(err)}\n`);
  process.exit(1);
});
