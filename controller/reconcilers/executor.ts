/**
 * Carries out the actions of a plan for one owner (Instance or Volume),
 * then writes its status. Every write is conditional: finalizer changes
 * and status carry the resourceVersion read from the cache, WorkItem
 * updates carry theirs, deletes carry the uid; a 409 propagates so the
 * work queue retries with a fresh cache. Creating a WorkItem that already
 * exists (a restarted or stale controller) is success, not a duplicate.
 */
import type { Logger } from 'winston';
import type { CairnClient } from '../../api/client/cairn-client.js';
import { isConflict, statusCodeOf } from '../../api/client/errors.js';
import { AGENT_FINALIZER, CONTROLLER_FINALIZER } from '../../api/names.js';
import type { Instance } from '../../api/instance.js';
import type { Volume } from '../../api/volume.js';
import type { WorkItem } from '../../api/workitem.js';
import type { EventRecorder } from '../../runtime/events.js';
import type { Action } from './actions.js';
import { sameJson } from './stable-json.js';
import type { StaleGuard } from './stale-guard.js';

type Owner = Instance | Volume;

/** Dependencies of an executor. */
export interface ExecutorDeps {
  client: CairnClient;
  recorder: EventRecorder;
  log: Logger;
  stale: StaleGuard;
}

/**
 * Applies actions and status for one owner object; returns the owner as last written. `writeRefused` hears of
 * each WorkItem whose create or update was refused (and only those: one whose answer was lost may have landed,
 * and stays assumed placed).
 */
export async function execute<O extends Owner>(deps: ExecutorDeps, kind: O['kind'] & ('Instance' | 'Volume'), owner: O, actions: Action[], status: O['status'] | undefined, writeRefused: (w: WorkItem) => void = () => undefined): Promise<O> {
  let latest = owner;
  const ns = owner.metadata.namespace!;
  const key = `${ns}/${owner.metadata.name}`;
  // The finalizer goes first (alone, it changes the owner's resourceVersion); WorkItem writes are independent of each other.
  const finalizer = actions.find((a) => a.type === 'addFinalizer' || a.type === 'removeFinalizer');
  const others = actions.filter((a) => a !== finalizer);
  const workItemWrites = Promise.allSettled(others.map((a) => applyWorkItemAction(deps, kind, owner, ns, a, writeRefused)));
  let finalizerError: { err: unknown } | undefined;
  if (finalizer) {
    const before = latest.metadata.resourceVersion;
    try {
      latest = (await deps.client.patch(kind, ns, owner.metadata.name!, finalizerPatch(latest, finalizer.type === 'addFinalizer'))) as O;
      deps.stale.replaced(key, before);
    } catch (err) {
      finalizerError = { err };
    }
  }
  // Every write of this attempt settles before it ends, success or not: a failed finalizer patch must not leave
  // WorkItem writes running into the next attempt (or their rejections unhandled, which ends the process).
  const failed = (await workItemWrites).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (finalizerError) throw finalizerError.err;
  if (failed) throw failed.reason;
  if (removedFinalizer(actions) || status === undefined) return latest;
  if (sameJson(latest.status ?? {}, status ?? {})) return latest;
  const written = (await deps.client.replaceStatus(kind as 'Instance', { ...latest, status } as Instance)) as unknown as O;
  deps.stale.replaced(key, latest.metadata.resourceVersion);
  return written;
}

async function applyWorkItemAction(deps: ExecutorDeps, kind: 'Instance' | 'Volume', owner: Owner, ns: string, a: Action, writeRefused: (w: WorkItem) => void): Promise<void> {
  switch (a.type) {
    case 'createWorkItem':
      return createIgnoringExisting(deps.client, a.workItem).catch(async (err: unknown) => {
        if (!(await mayHaveLanded(deps.client, a.workItem, err))) writeRefused(a.workItem);
        throw err;
      });
    case 'updateWorkItem':
      return void (await deps.client.replace('WorkItem', a.workItem).catch((err: unknown) => {
        if (isRefusal(err)) writeRefused(a.workItem);
        throw err;
      }));
    case 'deleteWorkItem':
      return void (await deps.client.delete('WorkItem', ns, a.name, { uid: a.uid }));
    case 'releaseWorkItem':
      return releaseWorkItem(deps.client, ns, a.name, a.uid);
    case 'deleteClaim':
      // At the version observed: a claim made again meanwhile (or gone) is left alone.
      return void (await deps.client.deleteLease(ns, a.name, a.resourceVersion));
    case 'deleteLease':
      return void (await deps.client.deleteLease(ns, a.name));
    case 'event':
      return void deps.recorder.record({ ...owner, kind, apiVersion: owner.apiVersion ?? 'cairn.dev/v1alpha1' }, a.eventType, a.reason, a.message);
  }
}

function removedFinalizer(actions: Action[]): boolean {
  return actions.some((a) => a.type === 'removeFinalizer');
}

function finalizerPatch(obj: Owner, add: boolean): object {
  const current = obj.metadata.finalizers ?? [];
  const finalizers = add ? [...new Set([...current, CONTROLLER_FINALIZER])] : current.filter((f) => f !== CONTROLLER_FINALIZER);
  return { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } };
}

async function createIgnoringExisting(client: CairnClient, workItem: WorkItem): Promise<void> {
  try {
    await client.create('WorkItem', workItem);
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

/**
 * Whether a create that failed may have landed all the same: a refusal (4xx) did not, but a lost answer (a
 * timeout, a dropped connection, a 5xx) may have. Then a read decides; if that fails too, the placement
 * stays assumed (until the watch shows it or the assumption expires): dropped, the instance would be
 * placed a second time, and one of its two WorkItems deleted, maybe the running one.
 */
async function mayHaveLanded(client: CairnClient, workItem: WorkItem, err: unknown): Promise<boolean> {
  if (isRefusal(err)) return false;
  return client.get('WorkItem', workItem.metadata.namespace, workItem.metadata.name!).then(
    (found) => found !== undefined,
    () => true,
  );
}

/**
 * Drops the agent's finalizer (its node is lost and fenced) and deletes the WorkItem planned on: by uid, as a
 * WorkItem made since under the name (the instance placed on that node again) is not the one to release.
 */
async function releaseWorkItem(client: CairnClient, namespace: string, name: string, uid: string | undefined): Promise<void> {
  const current = await client.get('WorkItem', namespace, name);
  if (!current || (uid !== undefined && current.metadata.uid !== uid)) return;
  const finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== AGENT_FINALIZER);
  if (finalizers.length !== (current.metadata.finalizers ?? []).length) {
    await client.patch('WorkItem', namespace, name, { metadata: { finalizers, resourceVersion: current.metadata.resourceVersion } });
  }
  if (!current.metadata.deletionTimestamp) await client.delete('WorkItem', namespace, name, { uid: current.metadata.uid });
}

/** A 4xx: the apiserver answered, and did not write. */
function isRefusal(err: unknown): boolean {
  const code = statusCodeOf(err);
  return code !== undefined && code >= 400 && code < 500;
}
