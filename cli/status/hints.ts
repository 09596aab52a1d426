/**
 * How-to-fix hints for the failure reasons the controller and the agent
 * write, for the failures that carry no hint of their own (a WorkItem's
 * lastError.hint, or a `Hint:` the controller put in a condition message,
 * always wins). Unschedulable is refined by the scheduler's words in the
 * message ("2 insufficient storage"), since the fix depends on which check
 * the nodes failed. Pure.
 */

type Kind = 'Cluster' | 'Node' | 'Instance' | 'Volume' | 'WorkItem';

interface HintContext {
  kind: Kind;
  name: string;
  namespace?: string;
  message: string;
}

// The namespace (Cluster) of the object; a Cluster's is its name.
function namespaceOf(c: HintContext): string | undefined {
  return c.namespace ?? (c.kind === 'Cluster' ? c.name : undefined);
}

// ` -n demo`, for the commands a hint suggests, so they look where the object is.
function ns(c: HintContext): string {
  const namespace = namespaceOf(c);
  return namespace ? ` -n ${namespace}` : '';
}

// Scheduler check texts (controller/scheduler/reasons.ts) and their fixes.
const UNSCHEDULABLE_FIXES: ReadonlyArray<readonly [RegExp, (c: HintContext) => string]> = [
  [/no nodes registered/, (c) => `start an agent for the cluster: cairn agent --cluster ${namespaceOf(c) ?? '<cluster>'} --node-name <name>`],
  [/insufficient storage/, () => 'lower spec.size (or spec.replicas), free storage by deleting volumes, or add a node with more storage (cairn agent --storage)'],
  [/insufficient cpu/, () => 'lower spec.cpus, free cpus by deleting instances, or add a node with more (cairn agent --cpus)'],
  [/insufficient memory/, () => 'lower spec.memory, free memory by deleting instances, or add a node with more (cairn agent --memory)'],
  [/didn't match node selector/, (c) => `fix the ${c.kind === 'Volume' ? 'spec.nodeSelector' : 'spec.placement.nodeSelector'}, or give a node matching labels (cairn agent --labels key=value)`],
  [/not the pinned node/, () => 'register the pinned node, or change spec.placement.nodeName / spec.migrateTo'],
  [/already holds a replica/, () => 'spec.replicas asks for more replicas than there are nodes that can hold one: add nodes or lower spec.replicas'],
  [/no replica of volume/, (c) => `start it on a node holding a replica of its volume: wait for the volume to become Ready (cairn get volumes${ns(c)})`],
  [/volume (\S+) is Stopped/, (c) => `start the volume: cairn volume start ${/volume (\S+) is Stopped/.exec(c.message)?.[1] ?? 'VOLUME'}${ns(c)}`],
  [/gluster unavailable/, () => 'install glusterfs-server, glusterfs-client and attr on the nodes (hack/install-gluster.sh) and restart their agents; cairn get nodes -o yaml shows status.drivers'],
  [/anti-affinity group/, () => 'add a node, or move an instance of the same spec.placement.antiAffinityGroup away'],
  [/max instances/, () => 'raise spec.policy.maxInstances / maxInstancesPerNode of the Cluster, or delete an instance'],
  [/unschedulable|unreachable|not ready/, (c) => `uncordon a node (cairn uncordon NODE${ns(c)}) or bring its agent back`],
];

// The scheduler lists the most frequent cause first: its fix is the one to give.
function firstMentioned(message: string): ((c: HintContext) => string) | undefined {
  let best: { at: number; fix: (c: HintContext) => string } | undefined;
  for (const [pattern, fix] of UNSCHEDULABLE_FIXES) {
    const at = message.search(pattern);
    if (at >= 0 && (!best || at < best.at)) best = { at, fix };
  }
  return best?.fix;
}

const BY_REASON: Record<string, (c: HintContext) => string> = {
  NoReadyNodes: (c) => `start an agent for the cluster: cairn agent --cluster ${c.name} --node-name <name>`,
  NodeLeaseExpired: (c) => `check that the agent of node ${c.name} runs and reaches the apiserver (its log says why); its instances fail over after the cluster's grace period`,
  NodeUnreachable: (c) => `check the agent of the node (cairn get nodes${ns(c)}); the instance fails over by itself after the cluster's grace period`,
  InsufficientCapacity: () => 'set spec.cpus / spec.memory back, or free capacity on its node (or move it: spec.migrateTo)',
  ShrinkNotSupported: () => 'set spec.size back to the current capacity; to shrink, create a smaller volume and copy the data',
  ReplicaReductionNotSupported: () => 'set spec.replicas back to the number of replicas that exist',
  ReplicaFailed: (c) => `see why on the replica's WorkItem: cairn failures${ns(c)}, or cairn describe volume ${c.name}${ns(c)}`,
  Degraded: (c) => `a replica is not ready: cairn describe volume ${c.name}${ns(c)} shows which one and why`,
  BrickOffline: (c) => `bring the brick's node or agent back (cairn get nodes${ns(c)}); writes go on meanwhile and are healed onto it when it returns, and a node lost for good gets its brick replaced`,
  SplitBrain: (c) => `keep one copy of each file: cairn volume set ${c.name} cluster.favorite-child-policy=mtime${ns(c)} lets GlusterFS choose (or size, ctime, majority); to choose per file, see docs/volumes.md "Split-brain"`,
  QuorumLost: (c) => `bring back the nodes of the offline bricks (cairn describe volume ${c.name}${ns(c)} names them): until most bricks run, reads and writes fail; nothing written before is lost`,
  CrashLoopBackOff: (c) => `the program keeps exiting: read its log (status.logPath of instance ${c.name}) and fix spec.process`,
  Exited: (c) => `the program exited: read its log (status.logPath of instance ${c.name}); set spec.restartPolicy to restart it`,
  Fenced: () => 'the agent could not renew the fencing lease: check that it reaches the apiserver; the instance restarts once it does',
  LeaseHeld: () => 'another node still holds the fencing lease; it starts here once that node stops it or its lease expires',
  Timeout: () => 'check the agent log on the node for why the operation was slow, or raise spec.timeoutSeconds of the WorkItem',
  NoSpace: () => 'free space under the agent\'s --data-dir on the node, or lower the requested size',
  PermissionDenied: () => 'let the agent write its --data-dir on the node (ownership, mode, read-only filesystem)',
  NotFound: () => 'create the missing path on the node, or fix the path in the spec',
  CommandFailed: () => 'see the agent log on the node for the command\'s output',
  InvalidSpec: (c) => `fix the spec of ${c.kind.toLowerCase()} ${c.name}; the agent retries once the spec changes`,
  DriverUnavailable: (c) => `use a driver the node has (cairn describe nodes${ns(c)} lists status.drivers), or install the missing one`,
  MigrationFailed: (c) => `see the migration status (cairn describe ${c.kind === 'Instance' ? `instance ${c.name}` : 'instances'}${ns(c)}) and the agent logs of both nodes; set spec.migrateTo again to retry`,
  Cancelled: () => 'the operation was cancelled (agent shutdown or a spec change); it is retried by itself',
};

/** The hint for a failure without one of its own. */
export function hintFor(reason: string, c: HintContext): string {
  if (reason === 'Unschedulable') {
    const fix = firstMentioned(c.message);
    return fix ? fix(c) : `no node fits: add capacity or nodes, or relax the placement; cairn get nodes${ns(c)} shows what is free`;
  }
  const hint = BY_REASON[reason];
  return hint ? hint(c) : `cairn describe ${c.kind.toLowerCase()} ${c.name}${c.namespace ? ` -n ${c.namespace}` : ''} shows the conditions and Events`;
}
