/**
 * The storage semantics of one served kind (kube's generic registry store):
 * create, get, update through a guaranteed-update loop, delete with
 * finalizers, all compare-and-swap on etcd's mod_revision. A write that
 * would not change the stored content is skipped (no new version, no event).
 *
 * Concurrency: any number of requests and apiserver replicas may write the
 * same key; each write compares the revision it read, and a lost race is
 * retried only when the client did not pin a resourceVersion (then 409).
 */
import { randomUUID, randomBytes } from 'node:crypto';
import { ApiError, alreadyExists, conflict, invalid, notFound } from '../errors.js';
import type { Registry } from '../registry.js';
import { groupVersion, type ResourceDefinition } from '../resources.js';
import { sameContent, type KubeObject } from '../storage/codec.js';
import type { EtcdStore, Stored } from '../storage/etcd-store.js';
import type { LeaseManager } from '../storage/lease-manager.js';
import { objectKey } from '../storage/keys.js';
import { validateMetadata } from '../validation/metadata.js';
import { admitObject, nameRule, type FieldValidation } from '../validation/validate-object.js';
import { ownedPaths } from './field-paths.js';
import { recordUpdate } from './managed-fields.js';
import { afterDelete, checkResourceVersion, prepareForCreate, prepareForUpdate, readyToDelete, type Propagation, type Subresource } from './lifecycle.js';
import type { Namespaces } from './namespaces.js';
import type { WriteAdmission } from '../auth/authorizer.js';
import { withFinalizers, type CreationFinalizers } from './controller-finalizer.js';

/** Options every write takes. */
export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** The authorizer's check of what is written (a node may change only some fields); throws to refuse. */
  admit?: WriteAdmission;
  /** Who writes, to record in managedFields (an Update entry); absent for server-side apply, which records its own. */
  fieldManager?: string;
  /**
   * For a write that may create (apply, PUT of a Lease): the authorization of a create, asked only when
   * the object is missing; refuses by throwing. The request itself was authorized as patch or update,
   * which must not let a writer create what they may not (kube asks the same).
   */
  authorizeCreate?: () => Promise<WriteAdmission | undefined>;
}

/** A written object and the warnings to send with it. */
export interface WriteResult {
  obj: KubeObject;
  warnings: string[];
  created?: boolean;
}

/** Preconditions a DELETE may carry. */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Computes an object's next state from its current one; may throw an ApiError. */
export type UpdateFn = (current: KubeObject) => KubeObject;

// A lost compare-and-swap is retried until this much time has passed (kube retries until the request times out).
const RETRY_BUDGET_MS = 30_000;

/** The dependencies of the store. */
export interface StoreDeps {
  etcd: EtcdStore;
  registry: Registry;
  namespaces: Namespaces;
  eventLeases: LeaseManager;
  now: () => Date;
  /** Finalizers admission adds to a new object (the controller's, while one leads); default none. */
  creationFinalizers?: CreationFinalizers;
  /** The watch cache's state of a key, which an update may start from instead of reading etcd. */
  cached?: (key: string) => Stored | undefined;
}

/** Create/get/update/delete for every kind. */
export class ResourceStore {
  constructor(private readonly deps: StoreDeps) {}

  /** Creates `body` in `ns`. */
  async create(def: ResourceDefinition, ns: string | undefined, body: KubeObject, opts: WriteOptions): Promise<WriteResult> {
    if (def.namespaced) await this.deps.namespaces.checkWritable(ns!);
    // What the request set, before admission fills in schema defaults: that is what its manager owns.
    const requested = opts.fieldManager ? ownedPaths(body, def.schema) : undefined;
    const warnings = admitObject(def, this.deps.registry.validator(def), body, opts.fieldValidation);
    const generated = !body.metadata.name && !!body.metadata.generateName;
    for (let attempt = 0; ; attempt++) {
      const name = generated ? body.metadata.generateName + randomSuffix() : body.metadata.name!;
      if (generated) checkGeneratedName(def, name);
      const fresh = prepareForCreate(def, { ...body, metadata: { ...body.metadata, name, namespace: def.namespaced ? ns : undefined } }, this.timestamp(), randomUUID());
      const prepared = withFinalizers(fresh, this.deps.creationFinalizers?.(def) ?? []);
      const obj = opts.fieldManager ? recordUpdate(undefined, prepared, opts.fieldManager, groupVersion(def), prepared.metadata.creationTimestamp!, def.schema, requested) : prepared;
      if (!def.namespaced) delete obj.metadata.namespace;
      opts.admit?.(undefined, obj);
      if (opts.dryRun) return { obj, warnings, created: true };
      const res = await this.deps.etcd.create(objectKey(def, ns, name), obj, await this.leaseFor(def));
      if (res.ok) return { obj: withVersion(obj, res.rev), warnings, created: true };
      if (!generated || attempt >= 5) throw alreadyExists(def.plural, def.group, name);
    }
  }

  /**
   * Reads, applies `fn`, admits and writes, retrying lost races unless the
   * result pins a resourceVersion. With `createIfMissing`, an absent object
   * is created from `fn` applied to an empty one (server-side apply, PUT of built-ins).
   * With `requireVersion` (PUT), replacing an existing object needs the
   * resourceVersion it was read at.
   */
  async update(
    def: ResourceDefinition,
    ns: string | undefined,
    name: string,
    sub: Subresource,
    fn: UpdateFn,
    opts: WriteOptions & { createIfMissing?: boolean; requireVersion?: boolean },
  ): Promise<WriteResult> {
    const key = objectKey(def, ns, name);
    // The first attempt starts from the watch cache, as kube's does: a stale state then costs a
    // failed compare-and-swap, and anything it led to (a conflict, a refusal, a write found
    // unneeded) is decided again on a fresh read from etcd.
    let cached = opts.dryRun ? undefined : this.deps.cached?.(key);
    for (const deadline = Date.now() + RETRY_BUDGET_MS; Date.now() < deadline; ) {
      const fromCache = cached !== undefined;
      const current = cached ?? (await this.deps.etcd.get(key));
      cached = undefined;
      if (!current) {
        if (!opts.createIfMissing) throw notFound(def.plural, def.group, name);
        const admit = opts.authorizeCreate ? await opts.authorizeCreate() : opts.admit;
        try {
          return await this.create(def, ns, fn(emptyObject(def, ns, name)), { ...opts, admit });
        } catch (err) {
          // Another writer created it first (two applies at once): this one is an update of theirs, as in kube.
          if (err instanceof ApiError && err.reason === 'AlreadyExists') continue;
          throw err;
        }
      }
      let attempt: { merged: KubeObject; warnings: string[]; pinned: boolean };
      try {
        attempt = this.prepareUpdate(def, name, sub, fn, opts, current.obj);
      } catch (err) {
        if (fromCache) continue;
        throw err;
      }
      const { merged, warnings, pinned } = attempt;
      // An unchanged object is not written again, unless its stored value is sealed with an old key.
      if (sameContent(merged, current.obj) && !current.stale) {
        if (fromCache) continue;
        return { obj: current.obj, warnings };
      }
      if (opts.dryRun) return { obj: merged, warnings };
      const written = await this.write(def, key, merged, current);
      if (written) return { obj: written, warnings };
      // As in delete(): its last finalizer removed, this request deleted the object, and gone now, that may be its
      // own delete whose answer was lost. That is the answer, not a Conflict, a NotFound, or an apply creating it again.
      if (readyToDelete(merged) && !(await this.deps.etcd.get(key))) return { obj: merged, warnings };
      if (pinned && !fromCache) throw conflict(def.plural, def.group, name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
    throw new ApiError(409, 'Conflict', `too many concurrent writers on ${def.plural} "${name}"; retry the request`);
  }

  /** `fn` applied to `stored`, checked, admitted and merged: what an update would write over it. */
  private prepareUpdate(
    def: ResourceDefinition,
    name: string,
    sub: Subresource,
    fn: UpdateFn,
    opts: WriteOptions & { requireVersion?: boolean },
    stored: KubeObject,
  ): { merged: KubeObject; warnings: string[]; pinned: boolean } {
    const next = fn(structuredClone(stored));
    if (opts.requireVersion && !next.metadata.resourceVersion) throw versionRequired(def, name);
    checkResourceVersion(def, stored, next, name);
    const warnings = admitObject(def, this.deps.registry.validator(def), next, opts.fieldValidation, stored);
    const prepared = prepareForUpdate(def, stored, next, sub);
    // Status writes are not recorded: server-side apply to the main endpoint never sets status.
    const merged = opts.fieldManager && sub === 'main' ? recordUpdate(stored, prepared, opts.fieldManager, groupVersion(def), this.timestamp(), def.schema) : prepared;
    opts.admit?.(stored, merged);
    return { merged, warnings, pinned: !!next.metadata.resourceVersion };
  }

  /** Deletes, or marks for deletion when finalizers remain; returns the last state. */
  async delete(def: ResourceDefinition, ns: string | undefined, name: string, pre: DeletePreconditions, dryRun: boolean, propagation: Propagation = 'Background'): Promise<KubeObject> {
    const key = objectKey(def, ns, name);
    // The state this request last tried to delete: gone after that failed try, the delete may be this
    // request's own (its commit answer lost, the client re-sent it, and the re-send found the key gone), and
    // gone is what was asked for; kubectl would otherwise report a delete that happened as NotFound.
    let tried: KubeObject | undefined;
    for (const deadline = Date.now() + RETRY_BUDGET_MS; Date.now() < deadline; ) {
      const current = await this.deps.etcd.get(key);
      if (!current) {
        if (tried) return tried;
        throw notFound(def.plural, def.group, name);
      }
      checkPreconditions(def, current.obj, pre, name);
      const next = afterDelete(current.obj, propagation, this.timestamp());
      if (next === null || dryRun) return next ?? current.obj;
      if (next === current.obj) {
        const res = await this.deps.etcd.delete(key, current.rev);
        if (res.ok) return withVersion(current.obj, res.rev);
        tried = current.obj;
      } else {
        const written = await this.write(def, key, next, current);
        if (written) return written;
      }
    }
    throw new ApiError(409, 'Conflict', `too many concurrent writers on ${def.plural} "${name}"; retry the request`);
  }

  /** Writes `next` over `current`, or deletes when its last finalizer went; null when the race was lost. */
  private async write(def: ResourceDefinition, key: string, next: KubeObject, current: Stored): Promise<KubeObject | null> {
    if (readyToDelete(next)) {
      const res = await this.deps.etcd.delete(key, current.rev);
      return res.ok ? withVersion(next, res.rev) : null;
    }
    const res = await this.deps.etcd.update(key, next, current, await this.leaseFor(def));
    return res.ok ? withVersion(next, res.rev) : null;
  }

  private async leaseFor(def: ResourceDefinition): Promise<string | undefined> {
    return def.group === '' && def.plural === 'events' ? this.deps.eventLeases.leaseFor() : undefined;
  }

  private timestamp(): string {
    return this.deps.now().toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

// admitObject ran before the name existed; the name generateName produced must follow the same rules.
function checkGeneratedName(def: ResourceDefinition, name: string): void {
  const causes = validateMetadata({ name }, nameRule(def)).map((c) => ({ ...c, field: 'metadata.generateName' }));
  if (causes.length > 0) throw invalid(def.kind, def.group, name, causes);
}

function versionRequired(def: ResourceDefinition, name: string): ApiError {
  const cause = { reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be specified for an update', field: 'metadata.resourceVersion' };
  return invalid(def.kind, def.group, name, [cause]);
}

function checkPreconditions(def: ResourceDefinition, obj: KubeObject, pre: DeletePreconditions, name: string): void {
  if (pre.uid && pre.uid !== obj.metadata.uid) {
    throw conflict(def.plural, def.group, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`);
  }
  if (pre.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(def.plural, def.group, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`);
  }
}

function emptyObject(def: ResourceDefinition, ns: string | undefined, name: string): KubeObject {
  const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
  return { apiVersion, kind: def.kind, metadata: def.namespaced ? { name, namespace: ns } : { name } };
}

function withVersion(obj: KubeObject, rev: number): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rev) } };
}


// kube's generateName suffix: 5 characters from a consonant-and-digit alphabet.
function randomSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
}
