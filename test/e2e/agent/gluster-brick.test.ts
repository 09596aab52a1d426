/**
 * The agent's gluster brick driver against real GlusterFS (issue 14): three
 * agents each run one brick of a replica-3 volume from the volfile in its
 * WorkItem and report it Running with its pid and port; a FUSE mount of the
 * generated client volfile writes the same bytes to every brick; a brick
 * outlives a kill -9 of its agent and is re-adopted, not restarted; deleting
 * the WorkItems stops the bricks and removes their directories.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { brickDataPath } from '../../../api/names.js';
import type { WorkItem } from '../../../api/workitem.js';
import { freePort } from '../../../apiserver/util/free-port.js';
import { brickVolfile, clientVolfile, type GlusterLayout } from '../../../controller/reconcilers/volume/volfiles.js';
import { alive, type AgentProcess } from '../../support/agent-process.js';
import { eventually } from '../../support/eventually.js';
import { killGlusterUnder, mountVolume, unmount, type GlusterProcess } from '../../support/gluster.js';
import { replicaWorkItem, useAgentE2E } from './harness.js';

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('cairn agent end to end: gluster bricks (issue 14)', function () {
  this.timeout(90_000);
  const e2e = useAgentE2E();
  const ns = 'e2e-gluster';
  const volume = 'shared';
  const nodes = ['gl-0', 'gl-1', 'gl-2'];
  const dataDirs: string[] = [];
  const agents: AgentProcess[] = [];
  let layout: GlusterLayout;
  let mnt: string | undefined;
  let mount: GlusterProcess | undefined;

  const item = (i: number): WorkItem => {
    const w = replicaWorkItem(ns, nodes[i]!, volume, { index: i, size: '1Gi', driver: 'gluster', brick: { volume: layout.volume, volumeId: layout.volumeId, path: layout.bricks[i]!.path, port: layout.bricks[i]!.port, volfile: brickVolfile(layout, i) } });
    return { ...w, metadata: { ...w.metadata, name: `${volume}.r${i}.${nodes[i]}` } };
  };
  const running = (i: number) => e2e.waitWorkItem(ns, `${volume}.r${i}.${nodes[i]}`, 'brick Running', (w) => w.status?.phase === 'Done' && w.status.volumeReplica?.brick?.state === 'Running');

  before(async function () {
    this.timeout(60_000);
    await e2e.createCluster(ns);
    for (const node of nodes) {
      const dir = e2e.tmp('gluster');
      dataDirs.push(dir);
      agents.push(await e2e.startAgent({ cluster: ns, nodeName: node, dataDir: dir }));
    }
    const ports = [await freePort(), await freePort(), await freePort()];
    layout = { volume: `${ns}-${volume}`, volumeId: randomUUID(), bricks: ports.map((port, i) => ({ host: '127.0.0.1', port, path: brickDataPath(dataDirs[i]!, ns, volume, i) })) };
  });

  after(async () => {
    if (mnt) unmount(mnt);
    await mount?.stop();
    // A brick the test left (a failed assertion) must not outlive it, nor its filesystem's mount.
    for (const d of dataDirs) killGlusterUnder(d);
  });

  it('runs one brick per agent, reported Running with its pid and port, and a mount writes the same bytes to all three', async () => {
    for (let i = 0; i < 3; i++) await e2e.client.create('WorkItem', item(i));
    for (let i = 0; i < 3; i++) {
      const w = await running(i);
      expect(w.status!.volumeReplica!.brick).to.include({ port: layout.bricks[i]!.port });
      expect(alive(w.status!.volumeReplica!.brick!.pid!)).to.equal(true);
    }
    mnt = path.join(e2e.tmp('mnt'), 'mnt');
    mount = await mountVolume(clientVolfile(layout), mnt, path.dirname(mnt));
    fs.writeFileSync(path.join(mnt, 'data.bin'), randomBytes(2 * 2 ** 20));
    const sum = sha(path.join(mnt, 'data.bin'));
    for (const b of layout.bricks) expect(sha(path.join(b.path, 'data.bin')), b.path).to.equal(sum);
  });

  it('keeps a brick running through a kill -9 of its agent, and the restarted agent re-adopts it', async () => {
    const pid = (await running(0)).status!.volumeReplica!.brick!.pid!;
    await agents[0]!.kill9();
    expect(alive(pid), 'the brick outlived its agent').to.equal(true);
    agents[0] = await e2e.startAgent({ cluster: ns, nodeName: nodes[0]!, dataDir: dataDirs[0]! });
    await eventually('the restarted agent to report the same brick', async () => (await running(0)).status!.volumeReplica!.brick!.pid === pid, 20_000);
    expect(fs.readFileSync(path.join(mnt!, 'data.bin')).length).to.equal(2 * 2 ** 20);
  });

  it('refuses a brick path outside the agent\'s bricks directory', async () => {
    const bad = item(1);
    bad.metadata.name = `${volume}.bad.${nodes[1]}`;
    bad.spec.volumeReplica!.index = 7;
    bad.spec.volumeReplica!.brick!.path = '/etc';
    await e2e.client.create('WorkItem', bad);
    const w = await e2e.waitWorkItem(ns, bad.metadata.name, 'Failed', (x) => x.status?.phase === 'Failed');
    expect(w.status!.lastError).to.include({ reason: 'InvalidSpec' });
    expect(w.status!.lastError!.message).to.match(/is not .*bricks/);
    await e2e.client.delete('WorkItem', ns, bad.metadata.name);
  });

  it('joins again as a new WorkItem of the same index in a run dir kept by reclaimPolicy Retain: its data predates what the others hold', async () => {
    const name = `${volume}.r2.${nodes[2]}`;
    const joining = (reclaimPolicy: 'Retain' | 'Delete'): WorkItem => {
      const w = item(2);
      return { ...w, spec: { ...w.spec, volumeReplica: { ...w.spec.volumeReplica!, reclaimPolicy, brick: { ...w.spec.volumeReplica!.brick!, clientVolfile: clientVolfile(layout) } } } };
    };
    const joined = async () => (await e2e.waitWorkItem(ns, name, 'brick joined', (w) => !!w.status?.volumeReplica?.brick?.joinedAt, 30_000)).status!.volumeReplica!.brick!.joinedAt!;
    await e2e.client.delete('WorkItem', ns, name);
    await eventually('the brick WorkItem gone', async () => !(await e2e.workItem(ns, name)), 30_000);
    await e2e.client.create('WorkItem', joining('Retain'));
    const first = await joined();
    await e2e.client.delete('WorkItem', ns, name);
    await eventually('the brick WorkItem gone', async () => !(await e2e.workItem(ns, name)), 30_000);
    expect(fs.existsSync(layout.bricks[2]!.path), 'Retain kept the brick').to.equal(true);
    await e2e.client.create('WorkItem', joining('Delete'));
    const again = await joined();
    expect(Date.parse(again), 'joined again, not the marker of the WorkItem before').to.be.greaterThan(Date.parse(first));
  });

  it('stops the bricks and removes their directories when the WorkItems are deleted', async () => {
    if (mnt) unmount(mnt);
    await mount?.stop();
    mount = undefined;
    const pids = await Promise.all([0, 1, 2].map(async (i) => (await running(i)).status!.volumeReplica!.brick!.pid!));
    for (let i = 0; i < 3; i++) await e2e.client.delete('WorkItem', ns, `${volume}.r${i}.${nodes[i]}`);
    await eventually('the WorkItems to be gone', async () => (await Promise.all([0, 1, 2].map((i) => e2e.workItem(ns, `${volume}.r${i}.${nodes[i]}`)))).every((w) => !w), 30_000);
    for (const pid of pids) expect(alive(pid), `brick ${pid}`).to.equal(false);
    for (const b of layout.bricks) expect(fs.existsSync(b.path), b.path).to.equal(false);
  });
});
