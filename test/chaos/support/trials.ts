/**
 * One chaos trial of each kind: a kill -9 of one process of a kind (then,
 * for the kinds a supervisor would restart, a start again after a random
 * pause), or a partition of one host for a random while. Each returns what
 * it did, for the figures. Randomness comes from a seeded generator, so a
 * failing run can be replayed with its printed seed.
 */
import { killAndWait } from '../../support/run-process.js';
import { copiesOf, processesWith } from '../../support/agent-process.js';
import { tag } from '../../e2e/agent/harness.js';
import type { ChaosCluster } from './chaos-cluster.js';
export { seeded } from '../../support/seeded-random.js';
import { NS, PING_TIMEOUT_S } from './workload.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function kill9(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** What a trial is given. */
export interface TrialContext {
  c: ChaosCluster;
  r: () => number;
  marker: string;
  instances: string[];
  /** Kill -9 trials so far, per instance (see leastKilled). */
  instanceKills: Map<string, number>;
}

/**
 * One of the instances killed least so far. A kill -9 counts as a crash, and each crash within ten
 * minutes doubles an instance's restart backoff (1, 2, 4 … s, like the kubelet's): seven kills of one
 * instance would hold it down longer than a trial waits.
 */
function leastKilled(t: TrialContext): string {
  const fewest = Math.min(...t.instances.map((n) => t.instanceKills.get(n) ?? 0));
  const name = pick(t.r, t.instances.filter((n) => (t.instanceKills.get(n) ?? 0) === fewest));
  t.instanceKills.set(name, fewest + 1);
  return name;
}

export const KILL_KINDS = ['apiserver', 'controller', 'agent', 'etcd', 'glusterfsd', 'instance'] as const;
export type KillKind = (typeof KILL_KINDS)[number];

/** What a kill did, and how to tell its effect was repaired (beyond the cluster converging). */
export interface Kill {
  what: string;
  repaired: () => boolean;
}

/** kill -9 of one process of `kind`. */
export async function killOne(kind: KillKind, t: TrialContext): Promise<Kill> {
  const { c, r } = t;
  const done = (what: string, repaired = () => true) => ({ what, repaired });
  switch (kind) {
    case 'apiserver':
      await c.apiserver.kill9();
      await sleep(r() * 1000);
      await c.startApiserver();
      return done('apiserver');
    case 'controller': {
      const id = (await c.leader()) ?? 'c1';
      const child = c.controllers.get(id)!.child;
      await killAndWait(child);
      await sleep(r() * 1000);
      await c.startController(id);
      return done(`controller ${id} (the leader)`);
    }
    case 'agent': {
      const node = pick(r, c.nodeNames());
      await c.agents.get(node)!.kill9();
      await sleep(r() * 3000); // within the safe window: the instances stay up, the restarted agent adopts them
      await c.startAgent(node, NS);
      return done(`agent ${node}`);
    }
    case 'etcd': {
      const member = pick(r, [...c.etcd.keys()]);
      const child = c.etcd.get(member)!;
      await killAndWait(child);
      await sleep(r() * 2000);
      c.startEtcd(member);
      return done(`etcd ${member}`);
    }
    case 'glusterfsd': {
      const node = pick(r, c.nodeNames());
      const pids = c.processesOn(node, 'glusterfsd');
      pids.forEach(kill9);
      return done(`glusterfsd on ${node} (${pids.length} processes)`, () => c.processesOn(node, 'glusterfsd').length >= pids.length);
    }
    case 'instance': {
      const name = leastKilled(t);
      const before = copiesOf(tag(t.marker, name));
      processesWith(tag(t.marker, name)).forEach((p) => kill9(p.pid));
      return done(`instance ${name} (session ${before.join(', ')})`, () => copiesOf(tag(t.marker, name)).some((s) => !before.includes(s)));
    }
  }
}

export const PARTITION_KINDS = ['agent', 'etcd-minority', 'apiserver-etcd', 'brick'] as const;
export type PartitionKind = (typeof PARTITION_KINDS)[number];

/** The node the writer runs on. */
async function writerNode(c: ChaosCluster): Promise<string | undefined> {
  return (await c.client.get('Instance', NS, 'writer').catch(() => undefined))?.status?.nodeName;
}

/** Nodes running at least one instance other than the writer. */
async function nodesWithInstances(c: ChaosCluster): Promise<string[]> {
  const items = (await c.client.list('Instance', { namespace: NS })).items;
  return [...new Set(items.filter((i) => i.metadata.name !== 'writer' && i.status?.nodeName).map((i) => i.status!.nodeName!))];
}

/**
 * One partition; returns what was cut and for how long. `agent`: a node
 * running instances, cut from everything long enough to be failed over
 * (its instances must stop before any copy starts elsewhere); every other
 * such trial also kills the leading controller in the middle of the
 * failover. `brick`: a node not running the writer, cut for a few seconds
 * while the writer goes on (its brick heals afterwards).
 */
export async function partitionOne(kind: PartitionKind, t: TrialContext, n: number): Promise<string> {
  const { c, r } = t;
  const cutFor = async (host: string, nets: Array<'lan' | 'etcd'>, ms: number, during?: () => Promise<void>) => {
    c.net.cut(host, nets);
    try {
      await Promise.all([sleep(ms), during?.()]);
    } finally {
      c.net.heal(host, nets);
    }
    return `${host} cut from ${nets.join('+')} for ${(ms / 1000).toFixed(1)} s`;
  };
  switch (kind) {
    case 'agent': {
      const node = pick(r, await nodesWithInstances(c));
      const killLeader = n % 2 === 1;
      const what = await cutFor(node, ['lan'], 14_000 + r() * 4000, killLeader ? () => sleep(6000 + r() * 6000).then(async () => void (await killOne('controller', t))) : undefined);
      return killLeader ? `${what}, the leading controller killed -9 during the failover` : what;
    }
    case 'etcd-minority':
      return cutFor(pick(r, [...c.etcd.keys()]), ['etcd'], 2000 + r() * 3000);
    case 'apiserver-etcd':
      return cutFor('cp', ['etcd'], 1000 + r() * 2500); // short of the agents' safe window: nothing is fenced
    case 'brick': {
      const writer = await writerNode(c);
      // Beyond the clients' ping timeout, so they give the brick up and writes go on without it (then it heals).
      return cutFor(pick(r, c.nodeNames().filter((x) => x !== writer)), ['lan'], (PING_TIMEOUT_S * 2 + 1 + r() * 3) * 1000);
    }
  }
}
