/**
 * The `cairn` client verbs as a user runs them (a real child process, a
 * kubeconfig), and a whole local cluster to run them against: `cairn
 * server` with its controller, a Cluster, and real agents whose data dirs
 * live under one temp dir. cleanup() stops everything and removes the
 * dir; instance processes are found by that dir in their command line
 * (the agent's shim carries its exit-file path), so none outlives a test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { CairnClient } from '../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../api/client/kubeconfig.js';
import type { ClusterSpec } from '../../api/cluster.js';
import { CAIRN_BIN } from '../../hack/cairn-process.js';
import { killGlusterUnder } from '../../hack/gluster-cleanup.js';
import { cmdline, killMarked, processesWith, startAgentProcess, type AgentProcess } from './agent-process.js';
import { Kubectl } from './kubectl.js';
import { runProcess, type ProcessResult, type ProcessRunOptions } from './run-process.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** The outcome of one `cairn` run. */
export type CliResult = ProcessResult;

/** Options of one `cairn` run. */
export type CliRunOptions = ProcessRunOptions;

/** Runs `node bin/cairn.js args...`; never throws on a non-zero exit. */
export function runCairn(args: string[], opts: CliRunOptions = {}): Promise<CliResult> {
  return runProcess(process.execPath, [CAIRN_BIN, ...args], opts);
}

/** Options of a test cluster. */
export interface TestClusterOptions {
  /** Namespace and Cluster name (default `demo`). */
  name?: string;
  /** Node names of the real agents to start (default none). */
  agents?: string[];
  /** Cluster spec (default: short failure-detection timings for tests). */
  spec?: ClusterSpec;
  /** Extra agent flags, e.g. --memory 1Gi. */
  agentArgs?: string[];
  /** Agents join with a join token and run as their node (default: they use the admin kubeconfig). */
  join?: boolean;
  /** Extra `cairn server` flags. */
  serverArgs?: string[];
}

/** A running cluster and the clients to drive it. */
export interface TestCluster {
  name: string;
  server: ServerProcess;
  /** Admin kubeconfig whose context namespace is the Cluster. */
  kubeconfig: string;
  client: CairnClient;
  kubectl: Kubectl;
  agents: Map<string, AgentProcess>;
  /** Temp dir holding the agents' data dirs; in every instance's command line. */
  dir: string;
  /** `cairn args...` with this cluster's kubeconfig. */
  cairn(args: string[], opts?: CliRunOptions): Promise<CliResult>;
  /** Starts (or restarts) the agent of a node. */
  startAgent(node: string): Promise<AgentProcess>;
  /** Live instance processes started by this cluster's agents (their shims). */
  instanceProcesses(): number[];
  cleanup(): Promise<void>;
}

const TEST_TIMINGS: ClusterSpec = {
  failureDetection: { heartbeatIntervalSeconds: 1, nodeLeaseDurationSeconds: 3, failoverGracePeriodSeconds: 1 },
};

/** Starts `cairn server` with its controller, creates the Cluster, and starts the agents. */
export async function startTestCluster(o: TestClusterOptions = {}): Promise<TestCluster> {
  const name = o.name ?? 'demo';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cli-'));
  const server = await startServerProcess({ controller: true, extraArgs: o.serverArgs });
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, withNamespace(fs.readFileSync(server.kubeconfig, 'utf8'), name), { mode: 0o600 });
  const kc = loadKubeConfig({ kubeconfig });
  const client = new CairnClient(kc);
  const kubectl = new Kubectl(kubeconfig);
  const agents = new Map<string, AgentProcess>();
  const cluster: TestCluster = {
    name,
    server,
    kubeconfig,
    client,
    kubectl,
    agents,
    dir,
    cairn: (args, opts) => runCairn([...args, '--kubeconfig', kubeconfig], opts),
    async startAgent(node) {
      const dataDir = path.join(dir, 'agents', node);
      const access = o.join ? { join: await joinAccess(cluster, dataDir) } : { kubeconfig };
      const agent = await startAgentProcess({ ...access, cluster: name, nodeName: node, dataDir, extraArgs: o.agentArgs });
      agents.set(node, agent);
      return agent;
    },
    // The shims' command lines carry <dir>/agents/<node>/instances/...; the agents' carry only <dir>/agents/<node>.
    instanceProcesses: () => processesWith(path.join(dir, 'agents')).map((p) => p.pid).filter((pid) => cmdline(pid).includes('/instances/')),
    async cleanup() {
      for (const a of agents.values()) await a.stop(3000).catch(() => undefined);
      killMarked(path.join(dir, 'agents'));
      killGlusterUnder(path.join(dir, 'agents'));
      kc.destroyAgent();
      kubectl.cleanup();
      await server.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await client.create('Cluster', { metadata: { name }, spec: o.spec ?? TEST_TIMINGS });
    for (const node of o.agents ?? []) await cluster.startAgent(node);
  } catch (err) {
    await cluster.cleanup();
    throw err;
  }
  return cluster;
}

// A new join token for a node that has not joined yet; a joined node's data dir holds its credential.
async function joinAccess(c: TestCluster, dataDir: string): Promise<{ server: string; caFile: string; token?: string }> {
  const access = { server: c.server.url, caFile: path.join(c.server.dataDir, 'pki', 'ca.crt') };
  if (fs.existsSync(path.join(dataDir, 'node-credential.json'))) return access;
  const r = await c.cairn(['token', 'create', '--cluster', c.name, '--ttl', '10m']);
  if (r.code !== 0) throw new Error(`cairn token create failed: ${r.stderr}`);
  return { ...access, token: r.stdout.trim() };
}

/** The kubeconfig with `namespace` as its current context's namespace. */
export function withNamespace(kubeconfig: string, namespace: string): string {
  const doc = YAML.parse(kubeconfig) as { 'current-context': string; contexts: { name: string; context: Record<string, string> }[] };
  for (const c of doc.contexts) if (c.name === doc['current-context']) c.context.namespace = namespace;
  return YAML.stringify(doc);
}
