/**
 * Restore from the agents (docs/restore.md): `cairn server` with its
 * controller and three real agents run a Cluster and process Instances;
 * the server is killed (kill -9) and its etcd data dir deleted; `cairn
 * restore --from-agents` rebuilds etcd from the agents' data dirs; the
 * server starts again on the same data dir and port. The same Nodes,
 * WorkItems and Instances exist, every instance runs on the same node with
 * the same pid (nothing restarted), the report names what was lost, and the
 * agents' watches resume (a new Instance runs).
 *
 * The Cluster and the agents use a 60 s node lease (a 56 s safe window):
 * the outage, server restart included, must end within the window or the
 * agents fence their instances (that stays correct); on a loaded 2-core
 * machine the default 6 s window is too short for a kill, a restore and a
 * server start. docs/restore.md states the bound.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Instance } from '../../../api/instance.js';
import { cmdline, killMarked, processesWith, startAgentProcess, type AgentProcess } from '../../support/agent-process.js';
import { runCairn } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { tag, tickCommand } from '../agent/harness.js';

const NS = 'rs';
const MARKER = `cairn-restore-e2e-${process.pid}`;
const NODES = ['node-a', 'node-b', 'node-c'];
const INSTANCES = ['web', 'db', 'cache', 'queue'];

/** The process groups running an instance: one per copy. */
const groupsOf = (name: string) => [...new Set(processesWith(tag(MARKER, name)).map((s) => s.pgrp))].sort();

describe('system: restore a lost etcd from the agents, nothing restarted', function () {
  this.timeout(240_000);
  let server: ServerProcess;
  let client: CairnClient;
  const agents = new Map<string, AgentProcess>();
  let dir: string;
  let ownDataDir: string;

  const connect = () => (client = new CairnClient(loadKubeConfig({ kubeconfig: server.kubeconfig })));
  const create = (name: string) =>
    client.create('Instance', { metadata: { name, namespace: NS }, spec: { memory: '32Mi', terminationGracePeriodSeconds: 1, process: { command: tickCommand(MARKER, name) } } } as Instance);
  const placement = async () => {
    const out = new Map<string, string | undefined>();
    for (const i of (await client.list('Instance', { namespace: NS })).items) out.set(i.metadata.name!, i.status?.phase === 'Running' ? i.status.nodeName : undefined);
    return out;
  };
  const copies = (node: string, resource: string) => {
    const d = path.join(dir, node, 'metadata', resource, resource.startsWith('clusters') ? '_' : NS);
    return fs.existsSync(d) ? fs.readdirSync(d) : [];
  };

  before(async function () {
    this.timeout(90_000);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-restore-'));
    ownDataDir = path.join(dir, 'server');
    server = await startServerProcess({ controller: true, dataDir: ownDataDir });
    connect();
    await client.create('Cluster', { metadata: { name: NS }, spec: { failureDetection: { heartbeatIntervalSeconds: 2, nodeLeaseDurationSeconds: 60 } } });
    for (const n of NODES) agents.set(n, await startAgentProcess({ kubeconfig: server.kubeconfig, cluster: NS, nodeName: n, dataDir: path.join(dir, n), heartbeatInterval: '2s', leaseDuration: '60s' }));
    await eventually('three Ready nodes', async () => (await client.list('Node', { namespace: NS })).items.filter((n) => n.status?.phase === 'Ready').length === 3, 30_000, 200);
  });

  after(async () => {
    for (const a of agents.values()) await a.stop(3000).catch(() => undefined);
    killMarked(MARKER);
    await server?.stop().catch(() => undefined);
    killControllersOf(ownDataDir);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('rebuilds etcd from three agents; every instance keeps running with the same pid, and watches resume', async () => {
    for (const name of INSTANCES) await create(name);
    await eventually('every instance Running', async () => [...(await placement()).values()].filter(Boolean).length === INSTANCES.length, 60_000, 200);
    const before = await placement();
    const groups = new Map(INSTANCES.map((n) => [n, groupsOf(n)]));
    for (const [name, g] of groups) expect(g, `one copy of ${name}`).to.have.length(1);
    const workItems = (await client.list('WorkItem', { namespace: NS })).items.map((w) => w.metadata.name).sort();
    const running = new Set(before.values());
    // The agents' copies: the Node and Cluster after registration, the owners 2 s after their WorkItems changed.
    await eventually('the agents kept their copies', () => NODES.every((n) => copies(n, 'nodes.cairn.dev').length === 1 && copies(n, 'clusters.cairn.dev').length === 1 && copies(n, 'leases.coordination.k8s.io').length >= 1) && [...running].every((n) => copies(n!, 'instances.cairn.dev').length > 0), 90_000, 250);
    await new Promise((r) => setTimeout(r, 3_000)); // the owners' copies catch the controller's last status writes

    const terms = () => NODES.map((n) => agents.get(n)!.logs().split('a new fencing term begins').length - 1);
    const termsBefore = terms();
    expect(termsBefore.every((t) => t >= 1), 'the agents log their terms').to.equal(true);
    const port = Number(new URL(server.url).port);
    const lostAt = Date.now();
    await server.kill9();
    killControllersOf(ownDataDir);
    await eventually('the embedded etcd died with its server', () => processesWith(path.join(ownDataDir, 'etcd')).length === 0, 10_000, 100);
    fs.rmSync(path.join(ownDataDir, 'etcd'), { recursive: true, force: true });

    const from = NODES.map((n) => path.join(dir, n)).join(',');
    const restored = await runCairn(['restore', '--from-agents', from, '--data-dir', ownDataDir], { timeoutMs: 60_000 });
    expect(restored.code, restored.stderr).to.equal(0);
    const report = restored.stdout;
    expect(report).to.match(/Restored \d+ objects from 3 agents \(node-a, node-b, node-c\)/);
    expect(report).to.match(/^\s+Instance\s+4\s+/m);
    expect(report).to.match(/^\s+WorkItem\s+4\s+/m);
    expect(report).to.match(/^\s+Node\s+3\s+node-a 1, node-b 1, node-c 1/m);
    expect(report).to.match(/^\s+Cluster\s+1\s+/m);
    expect(report).to.match(/Not recovered[\s\S]*every RoleBinding[\s\S]*Hint:/);
    expect(report).to.match(/every Event/);

    const again = await runCairn(['restore', '--from-agents', from, '--data-dir', ownDataDir], { timeoutMs: 60_000 });
    expect(again.code, 'a second restore into the restored etcd is refused').to.not.equal(0);
    expect(again.stderr).to.match(/already holds \d+ Cairn keys[\s\S]*--force/);

    server = await startServerProcess({ controller: true, dataDir: ownDataDir, port });
    connect();
    const outage = (Date.now() - lostAt) / 1000;
    expect(outage, 'the outage fits the agents\' 56 s safe window').to.be.below(56);

    expect((await client.list('Node', { namespace: NS })).items.map((n) => n.metadata.name).sort()).to.deep.equal(NODES);
    expect((await client.list('WorkItem', { namespace: NS })).items.map((w) => w.metadata.name).sort()).to.deep.equal(workItems);
    expect(await placement(), 'every instance Running on the same node').to.deep.equal(before);
    for (const name of INSTANCES) expect(groupsOf(name), `${name} runs as the same process group`).to.deep.equal(groups.get(name));

    await create('after');
    await eventually('an Instance created after the restore runs', async () => (await placement()).get('after') !== undefined, 60_000, 250);
    await eventually('nodes Ready', async () => (await client.list('Node', { namespace: NS })).items.filter((n) => n.status?.phase === 'Ready').length === 3, 30_000, 250);
    for (const name of INSTANCES) expect(groupsOf(name), `${name} still not restarted`).to.deep.equal(groups.get(name));
    expect(terms(), 'the restored node leases continue every node\'s term').to.deep.equal(termsBefore);
    const restarted = (await client.list('Instance', { namespace: NS })).items.filter((i) => INSTANCES.includes(i.metadata.name!) && (i.status?.restarts ?? 0) > 0);
    expect(restarted.map((i) => i.metadata.name)).to.deep.equal([]);
  });
});

/** Kills the controller a killed cairn server on `dataDir` left behind (its child, started by this test). */
function killControllersOf(dataDir: string): void {
  for (const p of processesWith(path.join(dataDir, 'admin.kubeconfig'))) {
    if (!cmdline(p.pid).includes(' controller ')) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
