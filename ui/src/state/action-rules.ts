/**
 * When an action makes no sense for the object as it is now, and why: the
 * explanation a disabled button carries as its title. Undefined means the
 * object allows the action (permissions are checked separately). Pure.
 */
import type { Instance } from '../../../api/instance';
import type { Node } from '../../../api/node';
import type { KubeObject } from '../api/paths';
import { migrationInFlight, migrationReport } from './migration';

/** Being deleted blocks every change. */
export function deleteBlocker(o: KubeObject): string | undefined {
  return o.metadata.deletionTimestamp ? 'It is being deleted.' : undefined;
}

export function startBlocker(i: Instance): string | undefined {
  return deleteBlocker(i) ?? (i.spec.runState === 'Stopped' ? undefined : 'It is already meant to run (spec.runState is Running).');
}

export function stopBlocker(i: Instance): string | undefined {
  return deleteBlocker(i) ?? (i.spec.runState === 'Stopped' ? 'It is already stopped (spec.runState is Stopped).' : undefined);
}

export function restartBlocker(i: Instance): string | undefined {
  return deleteBlocker(i) ?? (i.spec.runState === 'Stopped' ? 'It is stopped: start it instead.' : undefined);
}

/** `targets`, when known, are the nodes it could move to (migrationTargets). */
export function migrateBlocker(i: Instance, targets?: readonly string[]): string | undefined {
  const deleting = deleteBlocker(i);
  if (deleting) return deleting;
  if (migrationInFlight(i)) return `A migration to ${migrationReport(i)?.targetNode ?? 'another node'} is under way.`;
  if (i.spec.placement?.nodeName) return `It is pinned to node ${i.spec.placement.nodeName} (spec.placement.nodeName): change the pin to move it.`;
  if (targets?.length === 0) return 'No other node of its cluster is Ready and schedulable.';
  return undefined;
}

export function consoleBlocker(i: Instance): string | undefined {
  if (i.spec.driver !== 'qemu') return 'Only virtual machines (driver qemu) have a serial console; this is a process: read its log instead.';
  return undefined;
}

function cordoned(n: Node): boolean {
  return !!n.spec?.unschedulable;
}

export function cordonBlocker(n: Node): string | undefined {
  return deleteBlocker(n) ?? (cordoned(n) ? 'It is already cordoned.' : undefined);
}

export function drainBlocker(n: Node): string | undefined {
  return deleteBlocker(n) ?? (n.spec?.drain ? 'It is already draining (spec.drain is true).' : undefined);
}

export function uncordonBlocker(n: Node): string | undefined {
  return deleteBlocker(n) ?? (cordoned(n) || n.spec?.drain ? undefined : 'It is not cordoned.');
}
