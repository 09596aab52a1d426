/** Shared helpers of the agent integration tests: temp dirs, WorkItems, /proc probes, and cleanup of every process a test starts. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkItem, WorkItemInstanceSpec, WorkItemVolumeReplicaSpec } from '../../../api/workitem.js';
import type { OperationContext, OperationLog } from '../../../agent/drivers/driver.js';
import { groupMembers, isLive, readProcStat } from '../../../agent/drivers/process/proc.js';

/** A fresh directory under the OS temp dir. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `cairn-${prefix}-`));
}

/** A process-instance WorkItem for owner `name` in cluster c1. */
export function instanceItem(name: string, instance: Partial<WorkItemInstanceSpec> & { command: string[] }): WorkItem {
  const { command, ...rest } = instance;
  return {
    metadata: { namespace: 'c1', name: `wi-${name}` },
    spec: {
      nodeName: 'n1',
      type: 'InstanceRuntime',
      owner: { kind: 'Instance', name },
      instance: { driver: 'process', runState: 'Running', cpus: 1, memory: '64Mi', terminationGracePeriodSeconds: 5, process: { command }, ...rest },
    },
  };
}

/** A file-replica WorkItem for replica 0 of `volume` in cluster c1. */
export function replicaItem(volume: string, replica: Partial<WorkItemVolumeReplicaSpec> & { size: string }): WorkItem {
  return {
    metadata: { namespace: 'c1', name: `wi-${volume}-0` },
    spec: { nodeName: 'n1', type: 'VolumeReplica', owner: { kind: 'Volume', name: volume }, volumeReplica: { volumeName: volume, index: 0, ...replica } },
  };
}

/** Log lines captured for assertions. */
export interface CapturedLog extends OperationLog {
  lines: Array<{ level: string; message: string; meta?: Record<string, unknown> }>;
  error(message: string, meta?: Record<string, unknown>): void;
}

/** A logger that records instead of printing. */
export function captureLog(): CapturedLog {
  const lines: CapturedLog['lines'] = [];
  const at = (level: string) => (message: string, meta?: Record<string, unknown>) => void lines.push({ level, message, ...(meta ? { meta } : {}) });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** An in-process OperationContext (drivers called directly, without a worker) with a settable clock. */
export function directContext(dataDir: string, clock: { now: number } | undefined = undefined, extra: Partial<OperationContext> = {}): OperationContext {
  return { dataDir, nodeName: 'n1', now: () => clock?.now ?? Date.now(), operationId: 'test-op', signal: new AbortController().signal, log: captureLog(), ...extra };
}

/** Whether `pid` is a live (non-zombie) process. */
export function alive(pid: number): boolean {
  return isLive(readProcStat(pid));
}

export { groupMembers };

/** Command lines (/proc/<pid>/cmdline, arguments joined by spaces) of the live members of process group `pgid`. */
export function groupCommandLines(pgid: number): string[] {
  return groupMembers(pgid).map((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    } catch {
      return '';
    }
  });
}

/** SIGKILLs process groups, ignoring ones already gone; for after() hooks. */
export function killGroups(pgids: Iterable<number>): void {
  for (const pgid of pgids) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
