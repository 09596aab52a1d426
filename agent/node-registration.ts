/**
 * Registers this machine as a Node of its cluster: creates the Node, or
 * updates the labels this agent owns on an existing one, then writes the
 * machine facts and Ready into its status. Status is a read-modify-write
 * with the resourceVersion read, retried on conflict, so fields the
 * controller owns (phase while draining, allocation) are never clobbered.
 */
import type { Accelerator } from '../api/cluster.js';
import type { CairnClient } from '../api/client/cairn-client.js';
import { isConflict } from '../api/client/errors.js';
import { formatTime, setCondition } from '../api/conditions.js';
import type { Node, NodeDriver, NodeStatus } from '../api/node.js';
import type { Resources } from '../api/types.js';
import { detectAddresses, detectNodeInfo } from './machine.js';

/** What registration writes. */
export interface Registration {
  cluster: string;
  nodeName: string;
  labels: Record<string, string>;
  capacity: Resources;
  dataDir: string;
  agentVersion: string;
  agentStartTime: string;
  drivers: NodeDriver[];
  /** The accelerator qemu VMs with accelerator auto use here (unset without qemu). */
  accelerator?: Accelerator;
}

/** The status fields the agent owns, merged into the current status. */
export function agentNodeStatus(current: NodeStatus | undefined, r: Registration, now: Date): NodeStatus {
  const phase = current?.phase === 'Draining' || current?.phase === 'Drained' ? current.phase : 'Ready';
  return {
    ...current,
    phase,
    capacity: r.capacity,
    allocatable: r.capacity,
    addresses: detectAddresses(),
    agentVersion: r.agentVersion,
    drivers: r.drivers,
    ...(r.accelerator ? { accelerator: r.accelerator } : {}),
    nodeInfo: detectNodeInfo(),
    dataDir: r.dataDir,
    agentStartTime: r.agentStartTime,
    heartbeatTime: formatTime(now),
    conditions: setCondition(current?.conditions, { type: 'Ready', status: 'True', reason: 'AgentReady', message: `agent ${r.agentVersion} is running and renews its heartbeat lease` }, now),
  };
}

async function ensureNodeObject(client: CairnClient, r: Registration): Promise<Node> {
  const existing = await client.get('Node', r.cluster, r.nodeName);
  if (!existing) {
    try {
      return await client.create('Node', { metadata: { name: r.nodeName, namespace: r.cluster, labels: r.labels }, spec: {} });
    } catch (err) {
      if (!isConflict(err)) throw err;
      return (await client.get('Node', r.cluster, r.nodeName))!;
    }
  }
  const missing = Object.entries(r.labels).some(([k, v]) => existing.metadata.labels?.[k] !== v);
  if (!missing) return existing;
  return client.patch('Node', r.cluster, r.nodeName, { metadata: { labels: r.labels } });
}

/** Creates or updates the Node and marks it Ready; returns it as written. */
export async function registerNode(client: CairnClient, r: Registration, now: () => Date = () => new Date()): Promise<Node> {
  for (let attempt = 0; ; attempt++) {
    const node = await ensureNodeObject(client, r);
    try {
      return await client.replaceStatus('Node', { ...node, status: agentNodeStatus(node.status, r, now()) });
    } catch (err) {
      if (!isConflict(err) || attempt >= 5) throw err;
    }
  }
}
