/** fast-check arbitraries of clusters for the scheduler's property tests (not a test file itself). */
import fc from 'fast-check';
import type { Cluster } from '../../../../api/cluster.js';
import type { Instance } from '../../../../api/instance.js';
import type { Node } from '../../../../api/node.js';
import type { ReplicaState, Volume } from '../../../../api/volume.js';
import { cluster, instance, node, volume } from './builders.js';

const NODE_NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'node-1', 'node-10', 'node-2', 'x9', 'Z', 'z'];
const ZONES = ['z1', 'z2'];
const GROUPS = ['g1', 'g2'];

/** `arb` in about one case out of `oneIn`, undefined otherwise. */
function sometimes<T>(arb: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: oneIn - 1 }, { arbitrary: arb, weight: 1 });
}

/** A Node with random resources, labels and health; about two in three are eligible. */
export function nodeArb(name: string): fc.Arbitrary<Node> {
  const rare = sometimes(fc.constant(true), 15);
  return fc
    .record({
      cpus: fc.integer({ min: 0, max: 16 }),
      memoryMi: fc.integer({ min: 0, max: 8192 }),
      storageGi: fc.integer({ min: 0, max: 200 }),
      allocatableCpus: sometimes(fc.integer({ min: 0, max: 16 }), 2),
      zone: fc.constantFrom(...ZONES),
      phase: fc.oneof({ arbitrary: fc.constant('Ready'), weight: 14 }, { arbitrary: fc.constantFrom('NotReady', 'Unreachable', 'Draining', 'Drained'), weight: 4 }),
      ready: fc.oneof({ arbitrary: fc.constant('True'), weight: 8 }, { arbitrary: fc.constantFrom('False', 'Unknown', 'absent'), weight: 1 }),
      unschedulable: rare,
      drain: rare,
      deleting: rare,
    } as const)
    .map((o) =>
      node(name, {
        ...o,
        memory: `${o.memoryMi}Mi`,
        storage: `${o.storageGi}Gi`,
        labels: { zone: o.zone },
        allocatable: o.allocatableCpus === undefined ? undefined : { cpus: o.allocatableCpus },
      }),
    );
}

/** 0 to 7 Nodes with distinct names, in random order. */
export const nodesArb: fc.Arbitrary<Node[]> = fc
  .uniqueArray(fc.constantFrom(...NODE_NAMES), { maxLength: 7, size: 'max' })
  .chain((names) => fc.tuple(...names.map(nodeArb)));

/** A Cluster with random overcommit ratios and instance limits. */
export const clusterArb: fc.Arbitrary<Cluster> = fc
  .record({
    cpu: fc.constantFrom(undefined, 0.29, 0.5, 1, 1.5, 2),
    memory: fc.constantFrom(undefined, 0.5, 1, 1.3, 2),
    storage: fc.constantFrom(undefined, 0.5, 1, 1.7),
    maxInstancesPerNode: fc.constantFrom(0, 0, 1, 2, 3),
    maxInstances: fc.constantFrom(0, 0, 0, 4, 8),
  })
  .map(({ cpu, memory, storage, maxInstances, maxInstancesPerNode }) =>
    cluster({ maxInstances, maxInstancesPerNode, overcommit: { cpu, memory, storage } }),
  );

/** An unplaced Instance with random request, selector, anti-affinity group and (rarely) pin. */
export function instanceArb(name: string): fc.Arbitrary<Instance> {
  return fc
    .record({
      cpus: fc.integer({ min: 1, max: 4 }),
      memoryMi: fc.integer({ min: 0, max: 1536 }),
      zone: sometimes(fc.constantFrom(...ZONES), 3),
      group: sometimes(fc.constantFrom(...GROUPS), 2),
      pin: sometimes(fc.constantFrom(...NODE_NAMES), 8),
    })
    .map(({ cpus, memoryMi, zone, group, pin }) =>
      instance(name, {
        cpus,
        memory: `${memoryMi}Mi`,
        placement: { nodeSelector: zone ? { zone } : undefined, antiAffinityGroup: group, nodeName: pin },
      }),
    );
}

/** Unplaced Instances i0, i1, ... */
export const instancesArb: fc.Arbitrary<Instance[]> = fc
  .integer({ min: 0, max: 15 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, k) => instanceArb(`i${k}`))));

const REPLICA_STATES: ReplicaState[] = ['Pending', 'Creating', 'Ready', 'Resizing', 'Failed', 'Lost', 'Deleting'];

/** A Volume with random size, replica count, selector and existing replicas (any state, on any of NODE_NAMES). */
export function volumeArb(name: string, withReplicas: boolean): fc.Arbitrary<Volume> {
  const existing = withReplicas
    ? fc.array(fc.tuple(fc.constantFrom(...NODE_NAMES), fc.constantFrom(...REPLICA_STATES)), { maxLength: 4 })
    : fc.constant([]);
  return fc
    .record({
      sizeGi: fc.integer({ min: 0, max: 50 }),
      replicas: fc.integer({ min: 1, max: 4 }),
      zone: sometimes(fc.constantFrom(...ZONES), 3),
      existing,
    })
    .map(({ sizeGi, replicas, zone, existing: r }) => volume(name, { size: `${sizeGi}Gi`, replicas, nodeSelector: zone ? { zone } : undefined }, r));
}

/** A permutation of `items` driven by random keys (stable for equal keys). */
export function shuffled<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, i) => ({ item, key: keys[i % Math.max(keys.length, 1)] ?? 0, i }))
    .sort((a, b) => a.key - b.key || a.i - b.i)
    .map((x) => x.item);
}
