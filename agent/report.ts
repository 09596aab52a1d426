/**
 * The agent's /status document, like Ganeti's monitoring daemon reports:
 * the node's capacity and allocation, its instances with pids and uptime,
 * its volume replicas with sizes, and the operations in flight. Built from
 * the last status the agent wrote for each WorkItem, so it answers even
 * while the apiserver is away.
 */
import { parseQuantity } from '../api/quantity.js';
import type { WorkItem } from '../api/workitem.js';
import { detectCapacity, type CapacityOverrides } from './machine.js';
import type { OperationRunner } from './operations/runner.js';

/** What the report needs from the agent's settings. */
export interface ReportSettings {
  cluster: string;
  nodeName: string;
  dataDir: string;
  capacity: CapacityOverrides;
}

function instanceEntry(w: WorkItem, now: number) {
  const s = w.status?.instance;
  const started = s?.startedAt ? Date.parse(s.startedAt) : undefined;
  return {
    name: w.spec.owner.name,
    workItem: w.metadata.name,
    runState: w.spec.instance?.runState,
    state: s?.state ?? 'Pending',
    pid: s?.pid,
    startedAt: s?.startedAt,
    uptimeSeconds: started && s?.state === 'Running' ? Math.round((now - started) / 1000) : 0,
    restarts: s?.restarts ?? 0,
    logPath: s?.logPath,
    phase: w.status?.phase ?? 'Queued',
  };
}

function volumeEntry(w: WorkItem) {
  const r = w.status?.volumeReplica;
  return { volume: w.spec.owner.name, index: w.spec.volumeReplica?.index, size: w.spec.volumeReplica?.size, path: r?.path, sizeBytes: r?.sizeBytes ?? 0, allocatedBytes: r?.allocatedBytes ?? 0, phase: w.status?.phase ?? 'Queued' };
}

/** The node report served at /status. */
export function nodeReport(settings: ReportSettings, items: WorkItem[], runner: OperationRunner, now = Date.now()) {
  const instances = items.filter((w) => w.spec.type === 'InstanceRuntime' && !w.metadata.deletionTimestamp);
  const replicas = items.filter((w) => w.spec.type === 'VolumeReplica' && !w.metadata.deletionTimestamp);
  return {
    node: settings.nodeName,
    cluster: settings.cluster,
    time: new Date(now).toISOString(),
    capacity: detectCapacity(settings.dataDir, settings.capacity),
    allocated: {
      cpus: instances.reduce((n, w) => n + (w.spec.instance?.cpus ?? 0), 0),
      memoryBytes: instances.reduce((n, w) => n + parseQuantity(w.spec.instance?.memory ?? '0'), 0),
      storageBytes: replicas.reduce((n, w) => n + parseQuantity(w.spec.volumeReplica?.size ?? '0'), 0),
    },
    instances: instances.map((w) => instanceEntry(w, now)),
    volumes: replicas.map(volumeEntry),
    operations: runner.operations(),
    operationStats: runner.stats(),
  };
}
