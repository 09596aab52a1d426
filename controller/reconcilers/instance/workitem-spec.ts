/**
 * The WorkItem that runs an Instance on a node, built from the Instance,
 * its Cluster's defaults and the replicas of its volumes on that node.
 * Pure. The spec hash (an annotation) lets the reconciler tell whether a
 * stored WorkItem still says what it should, regardless of defaults the
 * apiserver filled in.
 */
import { createHash } from 'node:crypto';
import type { Cluster } from '../../../api/cluster.js';
import type { Instance } from '../../../api/instance.js';
import {
  AGENT_FINALIZER,
  NODE_LABEL,
  OWNER_KIND_LABEL,
  OWNER_NAME_LABEL,
  RESTARTED_AT_ANNOTATION,
  instanceLeaseName,
  instanceWorkItemName,
} from '../../../api/names.js';
import { API_VERSION } from '../../../api/types.js';
import { isGluster, type Volume } from '../../../api/volume.js';
import type { WorkItem, WorkItemInstanceSpec, WorkItemMigrationSpec, WorkItemSpec, WorkItemVolume } from '../../../api/workitem.js';
import { stableJson } from '../stable-json.js';
import { glusterMount } from '../volume/client-mount.js';

/** Annotation holding the hash of the spec the controller last wrote. */
export const SPEC_HASH_ANNOTATION = 'cairn.dev/spec-hash';

/** A stable hash of a WorkItem spec. */
export function specHash(spec: WorkItemSpec): string {
  return createHash('sha256').update(stableJson(spec)).digest('hex').slice(0, 16);
}

/** w with another spec, its spec-hash annotation recomputed (the hash always says what the controller wrote). */
export function withSpec(w: WorkItem, spec: WorkItemSpec): WorkItem {
  return { ...w, metadata: { ...w.metadata, annotations: { ...w.metadata.annotations, [SPEC_HASH_ANNOTATION]: specHash(spec) } }, spec };
}

/** An instance WorkItem with its side of a live migration set, or removed (undefined): it is then the ordinary WorkItem. */
export function withMigrationSpec(w: WorkItem, migration: WorkItemMigrationSpec | undefined): WorkItem {
  const { migration: _old, ...instance } = w.spec.instance!;
  return withSpec(w, { ...w.spec, instance: migration ? { ...instance, migration } : instance });
}

/** Each attachment with where its data is on nodeName: a gluster volume's mount (reachable from any node), else the local replica. */
function attachedVolumes(instance: Instance, volumes: ReadonlyMap<string, Volume>, nodeName: string): WorkItemVolume[] | undefined {
  if (!instance.spec.volumes?.length) return undefined;
  return instance.spec.volumes.map((a) => {
    const volume = volumes.get(a.volumeName);
    if (volume && isGluster(volume)) {
      const gluster = glusterMount(volume);
      return { ...a, ...(gluster ? { gluster } : {}) };
    }
    const replica = volume?.status?.replicas?.find((r) => r.nodeName === nodeName);
    return { ...a, ...(replica ? { replicaIndex: replica.index } : {}), ...(replica?.path ? { path: replica.path } : {}) };
  });
}

/** The instance slice of a WorkItem on nodeName. */
export function instanceRuntimeSpec(instance: Instance, cluster: Cluster | undefined, volumes: ReadonlyMap<string, Volume>, nodeName: string): WorkItemInstanceSpec {
  const s = instance.spec;
  const driver = s.driver ?? 'process';
  const restartToken = instance.metadata.annotations?.[RESTARTED_AT_ANNOTATION];
  return {
    driver,
    runState: s.runState ?? 'Running',
    cpus: s.cpus ?? 1,
    memory: s.memory ?? '128Mi',
    restartPolicy: s.restartPolicy ?? 'Always',
    terminationGracePeriodSeconds: s.terminationGracePeriodSeconds ?? 10,
    ...(restartToken ? { restartToken } : {}),
    ...(s.process ? { process: s.process } : {}),
    ...(driver === 'qemu' ? { qemu: { ...cluster?.spec?.driverDefaults?.qemu, ...withoutMigration(s.qemu) } } : {}),
    ...(s.volumes?.length ? { volumes: attachedVolumes(instance, volumes, nodeName) } : {}),
    fencing: { leaseName: instanceLeaseName(instance.metadata.name!) },
  };
}

function withoutMigration(q: Instance['spec']['qemu']) {
  if (!q) return {};
  const { migration: _migration, ...rest } = q;
  return rest;
}

/** What one desiredInstanceWorkItem call built, and from which objects. */
interface Built {
  cluster: string;
  nodeName: string;
  attached: Array<Volume | undefined>;
  workItem: WorkItem;
}

/**
 * The last WorkItem built for each Instance object. Every reconcile of a placed instance builds its
 * WorkItem again, and hashing it was the controller's largest cost of its own at 5,000 instances. The
 * informer's objects are never changed in place (a change is a new object), so while the instance,
 * its node and the volumes it reads are the same objects, and its cluster the same spec (the cluster's
 * status changes far more often), the result is the same. Callers never change a WorkItem they are given.
 */
const lastBuilt = new WeakMap<Instance, Built>();

/** The complete WorkItem (metadata, spec) that runs instance on nodeName. */
export function desiredInstanceWorkItem(instance: Instance, cluster: Cluster | undefined, volumes: ReadonlyMap<string, Volume>, nodeName: string): WorkItem {
  const attached = (instance.spec.volumes ?? []).map((a) => volumes.get(a.volumeName));
  const clusterSpec = `${cluster?.metadata.uid}/${cluster?.metadata.generation}`;
  const last = lastBuilt.get(instance);
  if (last && last.cluster === clusterSpec && last.nodeName === nodeName && sameObjects(last.attached, attached)) return last.workItem;
  const workItem = buildInstanceWorkItem(instance, cluster, volumes, nodeName);
  lastBuilt.set(instance, { cluster: clusterSpec, nodeName, attached, workItem });
  return workItem;
}

function sameObjects<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function buildInstanceWorkItem(instance: Instance, cluster: Cluster | undefined, volumes: ReadonlyMap<string, Volume>, nodeName: string): WorkItem {
  const name = instance.metadata.name!;
  const spec: WorkItemSpec = {
    nodeName,
    type: 'InstanceRuntime',
    owner: { kind: 'Instance', name, uid: instance.metadata.uid, generation: instance.metadata.generation },
    instance: instanceRuntimeSpec(instance, cluster, volumes, nodeName),
  };
  return {
    apiVersion: API_VERSION,
    kind: 'WorkItem',
    metadata: {
      name: instanceWorkItemName(name, nodeName),
      namespace: instance.metadata.namespace,
      labels: { [OWNER_KIND_LABEL]: 'Instance', [OWNER_NAME_LABEL]: name, [NODE_LABEL]: nodeName },
      annotations: { [SPEC_HASH_ANNOTATION]: specHash(spec) },
      finalizers: [AGENT_FINALIZER],
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Instance', name, uid: instance.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec,
  };
}
