/**
 * The garbage collector's thin layer: it reads every object of the kinds
 * it watches from the controller's informers, plans with plan.ts, and
 * carries out each step through the API. Every write is guarded against a
 * stale view: deletes carry the dependent's uid and the resourceVersion they
 * were planned on as preconditions, patches test that resourceVersion, and
 * an orphan is deleted only once a live read finds none of its owners (by uid).
 */
import type { Logger } from 'winston';
import { statusCodeOf } from '../../api/client/errors.js';
import type { RestClient } from '../../api/client/rest-client.js';
import type { Informer, ListedObject } from '../../runtime/informer.js';
import type { OwnerReference } from '../../api/types.js';
import { isGcCandidate, objectPath, planCollection, type GcAction, type GcKind, type GcObject } from './plan.js';

/** One watched kind and the informer that holds its objects. */
export interface GcSource {
  kind: GcKind;
  informer: Informer<ListedObject>;
}

// What an informer holds of an object's metadata.
interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  finalizers?: string[];
}

const UID_INDEX = 'gc-uid';
const CANDIDATE_INDEX = 'gc-candidate';
const CANDIDATE = 'yes';

/** What garbage collection reads of an object. */
export function gcFields(o: ListedObject): Omit<GcObject, 'kind'> {
  const m = o.metadata as Meta;
  return { namespace: m.namespace, name: m.name ?? '', uid: m.uid ?? '', resourceVersion: m.resourceVersion ?? '', ownerReferences: m.ownerReferences ?? [], deletionTimestamp: m.deletionTimestamp, finalizers: m.finalizers ?? [] };
}

/** Whether an update can change a collection step: its owners, its deletion, or its finalizers changed (not a lease renewal or a status write). */
export function changedForCollection(old: ListedObject, obj: ListedObject): boolean {
  const relevant = (o: ListedObject) => {
    const { uid, ownerReferences, deletionTimestamp, finalizers } = gcFields(o);
    return JSON.stringify([uid, ownerReferences, deletionTimestamp, finalizers]);
  };
  return relevant(old) !== relevant(obj);
}

/** A step the API refused because the object moved on: plan again soon. */
const RETRY_MS = 1000;

/** Collects garbage across the watched kinds. */
export class GarbageCollector {
  private readonly kinds: Map<string, GcKind>;

  /** Indexes the sources' informers by uid and by candidacy (so a run reads only the candidates). */
  constructor(
    private readonly sources: GcSource[],
    private readonly rest: RestClient,
    private readonly log: Logger,
  ) {
    this.kinds = new Map(sources.map((s) => [`${s.kind.group}/${s.kind.kind}`, s.kind]));
    for (const s of sources) {
      s.informer.addIndex(UID_INDEX, (o) => [(o.metadata as Meta).uid ?? '']);
      s.informer.addIndex(CANDIDATE_INDEX, (o) => (isGcCandidate(gcFields(o)) ? [CANDIDATE] : []));
    }
  }

  /**
   * Plans over the informers' current candidates and carries the steps out; asks to run again when one
   * lost a race. A run costs what the candidates number, not every object cached (ConfigMaps by the
   * hundred thousand, each planned every second, once starved this process of its leader lease).
   */
  async collect(): Promise<{ requeueAfterMs?: number }> {
    let retry = false;
    const failures: string[] = [];
    const exists = (uid: string) => this.sources.some((s) => s.informer.countByIndex(UID_INDEX, uid) > 0);
    for (const a of planCollection(this.candidates(), exists)) {
      try {
        retry = (await this.carryOut(a)) || retry;
      } catch (err) {
        this.log.warn('garbage collection step failed; retrying with backoff', { step: a.type, object: describe(a.target), error: String(err) });
        failures.push(`${a.type} ${describe(a.target)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // A failure (the API refusing or away) is the work queue's to back off from; a lost race is retried soon.
    if (failures.length > 0) throw new Error(`${failures.length} garbage collection step(s) failed, the first: ${failures[0]}`);
    return retry ? { requeueAfterMs: RETRY_MS } : {};
  }

  private candidates(): GcObject[] {
    return this.sources.flatMap((s) => s.informer.byIndex(CANDIDATE_INDEX, CANDIDATE).map((o) => ({ kind: s.kind, ...gcFields(o) })));
  }

  // True when the step must be planned again (the object changed under it); throws when the API failed it.
  private async carryOut(a: GcAction): Promise<boolean> {
    switch (a.type) {
      case 'deleteDependent':
        this.log.info('deleting a dependent of an owner being deleted in the foreground', { object: describe(a.target), owner: describe(a.owner) });
        return await this.delete(a.target);
      case 'deleteOrphaned':
        if (!(await this.ownersGone(a.target))) return false;
        this.log.info('deleting an object whose owners are all gone', { object: describe(a.target), owners: a.target.ownerReferences.map((r) => `${r.kind}/${r.name}`) });
        return await this.delete(a.target);
      case 'dropOwnerRefs': {
        const left = a.target.ownerReferences.filter((r) => !a.uids.includes(r.uid));
        const op = left.length > 0 ? { op: 'replace', path: '/metadata/ownerReferences', value: left } : { op: 'remove', path: '/metadata/ownerReferences' };
        return await this.patch(a.target, [op]);
      }
      case 'dropFinalizer':
        return await this.patch(a.target, [{ op: 'replace', path: '/metadata/finalizers', value: a.target.finalizers.filter((f) => f !== a.finalizer) }]);
    }
  }

  private async delete(o: GcObject): Promise<boolean> {
    // The version planned on too: owners changed since (adopted, or its owner references removed) make it a 409, planned again.
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: o.uid, resourceVersion: o.resourceVersion } };
    return this.tolerate(() => this.rest.request('DELETE', objectPath(o.kind, o.namespace, o.name), { body }));
  }

  // A JSON patch that applies only to the version it was planned on.
  private async patch(o: GcObject, ops: unknown[]): Promise<boolean> {
    const body = [{ op: 'test', path: '/metadata/resourceVersion', value: o.resourceVersion }, ...ops];
    return this.tolerate(() => this.rest.request('PATCH', objectPath(o.kind, o.namespace, o.name), { body, headers: { 'Content-Type': 'application/json-patch+json' } }));
  }

  // Gone (404): done. Moved on (409, or 422 from a failed test): plan again.
  private async tolerate(call: () => Promise<unknown>): Promise<boolean> {
    try {
      await call();
      return false;
    } catch (err) {
      const code = statusCodeOf(err);
      if (code === 404) return false;
      if (code === 409 || code === 422) return true;
      throw err;
    }
  }

  // A live read of each owner: gone when absent, or present under another uid (recreated).
  private async ownersGone(o: GcObject): Promise<boolean> {
    for (const r of o.ownerReferences) {
      const [group, version] = r.apiVersion.includes('/') ? r.apiVersion.split('/') : ['', r.apiVersion];
      const kind = this.kinds.get(`${group}/${r.kind}`);
      // An owner of a kind not watched here cannot be judged gone.
      if (!kind) return false;
      try {
        const live = await this.rest.request<{ metadata?: { uid?: string } }>('GET', objectPath({ ...kind, version: version! }, o.namespace, r.name));
        if (live.metadata?.uid === r.uid) return false;
      } catch (err) {
        if (statusCodeOf(err) !== 404) throw err;
      }
    }
    return true;
  }
}

function describe(o: GcObject): string {
  return `${o.kind.plural}${o.kind.group ? `.${o.kind.group}` : ''} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}
