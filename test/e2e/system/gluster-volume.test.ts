/**
 * A gluster Volume through the real controller (issue 14, so far): `cairn
 * server` with its controller and three agents. A Volume with driver
 * gluster and 3 replicas gets one brick per node, each under its node's
 * data dir on a port the controller chose, run by the agents; the Volume
 * becomes Ready; a FUSE mount of the client volfile for those bricks
 * writes the same bytes to all three; each agent runs a self-heal daemon
 * next to its brick, so a brick killed while writes go on is restarted by
 * its agent and healed, its pending heals going to zero in the WorkItems'
 * status; a 64Mi Volume refuses writes past its size (ENOSPC) and grows
 * to 128Mi online, one brick at a time, while writes go on without an
 * error (through `cairn volume expand`); an arbiter Volume keeps file data
 * on two bricks only; the `cairn volume` verbs change options (online, no
 * brick restart), stop and start it; a joined brick that lost its volume id
 * is refused and, replaced, healed; a Volume raised to more replicas than
 * nodes fit keeps serving on its bricks, and the new brick, once it fits,
 * joins and is healed; deleting the Volume stops every brick and removes
 * its directory.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Instance } from '../../../api/instance.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import { glusterMount } from '../../../controller/reconcilers/volume/client-mount.js';
import { clientVolfile } from '../../../controller/reconcilers/volume/volfiles.js';
import { alive, startAgentProcess, type AgentProcess } from '../../support/agent-process.js';
import { eventually } from '../../support/eventually.js';
import { until } from '../../support/controller-env.js';
import { killGlusterUnder, mountVolume, unmount, type GlusterProcess } from '../../support/gluster.js';
import { runCairn } from '../../support/cairn-cli.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';

const NS = 'glv';
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('system: a gluster Volume, placed by the controller and run by the agents (issue 14)', function () {
  this.timeout(120_000);
  let server: ServerProcess;
  let client: CairnClient;
  const agents: AgentProcess[] = [];
  let dir: string;
  let mount: GlusterProcess | undefined;
  let mnt: string | undefined;

  const volumeCli = (...args: string[]) => runCairn(['volume', ...args, '-n', NS, '--kubeconfig', server.kubeconfig]);
  const bricks = async () => (await client.list('WorkItem', { namespace: NS })).items.filter((w: WorkItem) => w.spec.owner.name === 'shared').sort((a, b) => a.spec.volumeReplica!.index - b.spec.volumeReplica!.index);

  /** Waits until every brick of `shared` reports its self-heal daemon running on a volfile with `line`. */
  const shdsRunWith = (line: string) =>
    eventually(`every self-heal daemon on a volfile with "${line}"`, async () => (await bricks()).every((w) => {
      const shd = path.join(dir, w.spec.nodeName, 'gluster', NS, `shared-${w.spec.volumeReplica!.index}`, 'shd.vol');
      return w.status?.volumeReplica?.brick?.selfHeal === 'Running' && fs.readFileSync(shd, 'utf8').includes(line) && w.status.observedGeneration === w.metadata.generation;
    }), 30_000, 200);

  before(async function () {
    this.timeout(60_000);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-glv-'));
    server = await startServerProcess({ controller: true });
    client = new CairnClient(loadKubeConfig({ kubeconfig: server.kubeconfig }));
    await client.create('Cluster', { metadata: { name: NS }, spec: {} });
    for (const n of ['node-a', 'node-b', 'node-c']) agents.push(await startAgentProcess({ kubeconfig: server.kubeconfig, cluster: NS, nodeName: n, dataDir: path.join(dir, n) }));
    await eventually('three Ready nodes', async () => (await client.list('Node', { namespace: NS })).items.filter((n) => n.status?.phase === 'Ready').length === 3, 30_000, 200);
  });

  after(async () => {
    if (mnt) unmount(mnt);
    await mount?.stop();
    for (const a of agents) await a.stop(3000).catch(() => undefined);
    for (const n of ['node-a', 'node-b', 'node-c']) killGlusterUnder(path.join(dir, n));
    await server?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs one brick per node and becomes Ready; a mount writes the same bytes to every brick', async () => {
    await client.create('Volume', { metadata: { name: 'shared', namespace: NS }, spec: { size: '1Gi', replicas: 3, driver: 'gluster' } } as Volume);
    await eventually('the Volume Ready', async () => (await client.get('Volume', NS, 'shared'))?.status?.phase === 'Ready', 60_000, 200).catch(async (err: Error) => {
      const state = { volume: (await client.get('Volume', NS, 'shared'))?.status, workItems: (await bricks()).map((w) => ({ spec: { ...w.spec.volumeReplica, brick: { ...w.spec.volumeReplica?.brick, volfile: undefined } }, status: w.status })) };
      throw new Error(`${err.message}; last seen: ${JSON.stringify(state)}`);
    });
    const items = await bricks();
    expect(items.map((w) => w.spec.nodeName).sort()).to.deep.equal(['node-a', 'node-b', 'node-c']);
    for (const w of items) {
      expect(w.spec.volumeReplica!.brick!.path).to.equal(path.join(dir, w.spec.nodeName, 'bricks', NS, `shared-${w.spec.volumeReplica!.index}`));
      expect(w.status?.volumeReplica?.brick).to.include({ state: 'Running' });
    }
    const layout = { volume: items[0]!.spec.volumeReplica!.brick!.volume, volumeId: items[0]!.spec.volumeReplica!.brick!.volumeId, bricks: items.map((w) => ({ host: '127.0.0.1', port: w.spec.volumeReplica!.brick!.port, path: w.spec.volumeReplica!.brick!.path })) };
    mnt = path.join(dir, 'mnt');
    mount = await mountVolume(clientVolfile(layout), mnt, dir);
    fs.writeFileSync(path.join(mnt, 'data.bin'), randomBytes(2 * 2 ** 20));
    const sum = sha(path.join(mnt, 'data.bin'));
    for (const b of layout.bricks) expect(sha(path.join(b.path, 'data.bin')), b.path).to.equal(sum);
  });

  it('restarts a killed brick and heals it: pending heals reported, then zero, and the same bytes on it', async () => {
    await eventually('a self-heal daemon next to every brick', async () => (await bricks()).every((w) => w.status?.volumeReplica?.brick?.selfHeal === 'Running'), 30_000, 200);
    const victim = (await bricks())[2]!;
    process.kill(victim.status!.volumeReplica!.brick!.pid!, 'SIGKILL');
    fs.writeFileSync(path.join(mnt!, 'while-down.bin'), randomBytes(2 * 2 ** 20));
    await eventually('the brick back and healed', async () => {
      const back = (await bricks())[2]!.status?.volumeReplica?.brick;
      return back?.state === 'Running' && back.pid !== victim.status!.volumeReplica!.brick!.pid && fs.existsSync(path.join(victim.spec.volumeReplica!.brick!.path, 'while-down.bin')) && sha(path.join(victim.spec.volumeReplica!.brick!.path, 'while-down.bin')) === sha(path.join(mnt!, 'while-down.bin'));
    }, 60_000, 250);
    await eventually('no pending heals reported', async () => (await bricks()).every((w) => w.status?.volumeReplica?.brick?.pendingHeals === 0), 60_000, 250);
  });

  it('enforces size: ENOSPC past it; growing it online (one brick at a time) keeps writes going and makes the room', async () => {
    unmount(mnt);
    await mount?.stop();
    await client.create('Volume', { metadata: { name: 'small', namespace: NS }, spec: { size: '64Mi', replicas: 3, driver: 'gluster' } } as Volume);
    await eventually('small Ready', async () => (await client.get('Volume', NS, 'small'))?.status?.phase === 'Ready', 60_000, 200);
    const items = (await client.list('WorkItem', { namespace: NS })).items.filter((w: WorkItem) => w.spec.owner.name === 'small').sort((a, b) => a.spec.volumeReplica!.index - b.spec.volumeReplica!.index);
    const layout = { volume: items[0]!.spec.volumeReplica!.brick!.volume, volumeId: items[0]!.spec.volumeReplica!.brick!.volumeId, bricks: items.map((w) => ({ host: '127.0.0.1', port: w.spec.volumeReplica!.brick!.port, path: w.spec.volumeReplica!.brick!.path })) };
    mnt = path.join(dir, 'mnt-small');
    mount = await mountVolume(clientVolfile(layout), mnt, dir);
    // The first error the writer meets is the one that counts: after an ENOSPC, the close may fail too
    // (EIO, write-behind's data that could not be flushed either), and must not hide it.
    const fill = (name: string, mib: number) => {
      const fd = fs.openSync(path.join(mnt!, name), 'w');
      let failure: unknown;
      try {
        for (let i = 0; i < mib; i++) fs.writeSync(fd, randomBytes(2 ** 20));
        fs.fsyncSync(fd);
      } catch (err) {
        failure = err;
      }
      try {
        fs.closeSync(fd);
      } catch (err) {
        failure ??= err;
      }
      if (failure) throw failure;
    };
    expect(() => fill('big.bin', 80), '80 MiB into 64Mi').to.throw(/ENOSPC/);
    fs.rmSync(path.join(mnt, 'big.bin'), { force: true });
    fill('half.bin', 32);

    let writeErrors = 0;
    let writes = 0;
    const writer = setInterval(() => {
      try {
        fs.appendFileSync(path.join(mnt!, 'during.log'), `${writes++}\n`);
      } catch {
        writeErrors++;
      }
    }, 50);
    try {
      const expand = await volumeCli('expand', 'small', '--size', '128Mi');
      expect(expand.code, expand.stderr).to.equal(0);
      await eventually('small Ready at 128Mi', async () => {
        const v = await client.get('Volume', NS, 'small');
        return v?.status?.phase === 'Ready' && v.status.replicas!.every((r) => r.size === '128Mi');
      }, 90_000, 200);
    } finally {
      clearInterval(writer);
    }
    expect(writeErrors, `write errors while growing (of ${writes})`).to.equal(0);
    expect(writes).to.be.greaterThan(10);
    fill('more.bin', 80);
    expect(fs.statSync(path.join(mnt, 'more.bin')).size).to.equal(80 * 2 ** 20);
    unmount(mnt);
    await mount.stop();
    mount = undefined;
    await client.delete('Volume', NS, 'small');
  });

  it('an arbiter volume keeps file data on two bricks, and only names and metadata on the third', async () => {
    await client.create('Volume', { metadata: { name: 'arb', namespace: NS }, spec: { size: '64Mi', replicas: 3, arbiter: true } } as Volume);
    await eventually('arb Ready', async () => (await client.get('Volume', NS, 'arb'))?.status?.phase === 'Ready', 60_000, 200);
    const items = (await client.list('WorkItem', { namespace: NS })).items.filter((w: WorkItem) => w.spec.owner.name === 'arb').sort((a, b) => a.spec.volumeReplica!.index - b.spec.volumeReplica!.index);
    expect(items.map((w) => w.spec.volumeReplica!.brick!.volfile.includes('type features/arbiter'))).to.deep.equal([false, false, true]);
    const arbMnt = path.join(dir, 'mnt-arb');
    // Through the volfile the controller wrote for the volume's clients.
    const arbMount = await mountVolume(items[0]!.spec.volumeReplica!.brick!.clientVolfile!, arbMnt, dir);
    try {
      fs.writeFileSync(path.join(arbMnt, 'a.bin'), randomBytes(2 ** 20));
      const sum = sha(path.join(arbMnt, 'a.bin'));
      const on = (i: number) => path.join(items[i]!.spec.volumeReplica!.brick!.path, 'a.bin');
      expect([sha(on(0)), sha(on(1))]).to.deep.equal([sum, sum]);
      expect(fs.statSync(on(2)).size, 'the arbiter holds the name, not the data').to.equal(0);
    } finally {
      await arbMount.stop();
    }
    await client.delete('Volume', NS, 'arb');
  });

  it('cairn volume set/get/reset change spec.options, validated; the self-heal daemons restart on the new volfile, the bricks do not', async () => {
    const before = await bricks();
    const set = await volumeCli('set', 'shared', 'network.ping-timeout=7', 'cluster.heal-timeout=30');
    expect(set.code, set.stderr).to.equal(0);
    await shdsRunWith('option heal-timeout 30');
    const after = await bricks();
    expect(after.map((w) => w.spec.volumeReplica!.brick!.clientVolfile)).to.satisfy((vs: string[]) => vs.every((v) => v.includes('option ping-timeout 7')));
    expect(after.map((w) => w.status?.volumeReplica?.brick?.pid), 'brick pids').to.deep.equal(before.map((w) => w.status?.volumeReplica?.brick?.pid));
    const get = await volumeCli('get', 'shared');
    expect(get.stdout).to.match(/network\.ping-timeout\s+7\s+set/).and.match(/cluster\.quorum-type\s+auto\s+default/);
    const unknown = await volumeCli('set', 'shared', 'performance.cache-size=1GB');
    expect([unknown.code, unknown.stderr]).to.deep.equal([1, 'error: unsupported option "performance.cache-size"\nhint: supported options: cluster.quorum-type, cluster.quorum-count, cluster.favorite-child-policy, cluster.data-self-heal-algorithm, cluster.heal-timeout, network.ping-timeout, performance.write-behind, performance.write-behind-window-size, diagnostics.client-log-level (cairn volume get VOLUME shows them)\n']);
    const bad = await volumeCli('set', 'shared', 'network.ping-timeout=soon');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('spec.options[network.ping-timeout]: Invalid value: "soon"').and.include('an integer from 1 to 1013');
    const reset = await volumeCli('reset', 'shared', '--all');
    expect(reset.code, reset.stderr).to.equal(0);
    expect((await client.get('Volume', NS, 'shared'))?.spec.options).to.equal(undefined);
  });

  it('cairn volume stop stops every brick and keeps the data; start brings them back Ready with the same bytes', async () => {
    const items = await bricks();
    const stop = await volumeCli('stop', 'shared', '--wait', '--timeout', '60s');
    expect(stop.code, stop.stderr).to.equal(0);
    expect(stop.stdout).to.include('is Stopped');
    for (const w of items) expect(alive(w.status!.volumeReplica!.brick!.pid!), `brick on ${w.spec.nodeName}`).to.equal(false);
    expect((await client.get('Volume', NS, 'shared'))?.status?.phase).to.equal('Stopped');
    const sum = sha(path.join(items[0]!.spec.volumeReplica!.brick!.path, 'data.bin'));
    const start = await volumeCli('start', 'shared', '--wait', '--timeout', '60s');
    expect(start.code, start.stderr).to.equal(0);
    expect(start.stdout).to.include('is Ready');
    for (const w of await bricks()) expect(sha(path.join(w.spec.volumeReplica!.brick!.path, 'data.bin'))).to.equal(sum);
  });

  it('a joined brick whose root lost its volume id is refused with how to replace it, not served empty; replaced, it is healed', async () => {
    // At the default crawl (600 s): the other bricks' self-heal daemons restart on the new brick's join
    // (its peerJoins), so they copy onto it at once, even when it came up before its join marked the root.
    const victim = (await bricks())[2]!;
    const brickPath = victim.spec.volumeReplica!.brick!.path;
    const sum = sha(path.join(brickPath, 'data.bin'));
    execFileSync('setfattr', ['-x', 'trusted.glusterfs.volume-id', brickPath]);
    process.kill(victim.status!.volumeReplica!.brick!.pid!, 'SIGKILL');
    const failed = await until('the brick refused', async () => {
      const w = (await bricks())[2]!;
      return w.status?.lastError?.message.includes('lost its data') ? w : undefined;
    }, 30_000, 200);
    expect(failed.status!.lastError).to.include({ reason: 'NotFound' });
    const failures = await runCairn(['failures', '-n', NS, '--kubeconfig', server.kubeconfig]);
    expect(failures.stdout).to.include('lost its data').and.include('delete this WorkItem');
    await client.delete('WorkItem', NS, victim.metadata.name!);
    await eventually('the Volume Ready with a new brick 2', async () => {
      const w = (await bricks())[2];
      return (await client.get('Volume', NS, 'shared'))?.status?.phase === 'Ready' && !!w && w.metadata.uid !== victim.metadata.uid;
    }, 60_000, 200, async () => ({ volume: (await client.get('Volume', NS, 'shared'))?.status, bricks: (await bricks()).map((b) => ({ name: b.metadata.name, status: b.status })) }));
    const fresh = (await bricks())[2]!;
    await eventually('data.bin healed onto the new brick', () => {
      const f = path.join(fresh.spec.volumeReplica!.brick!.path, 'data.bin');
      return fs.existsSync(f) && sha(f) === sum;
    }, 60_000, 250);
    // Bricks 0 and 1 were told of the join (peerJoins), and their self-heal daemons run as started after it.
    const joined = `2@${fresh.status!.volumeReplica!.brick!.joinedAt!}`;
    await eventually('the other self-heal daemons restarted on the join', async () => (await bricks()).slice(0, 2).every((w) => {
      const told = w.spec.volumeReplica!.brick!.peerJoins;
      const runDir = path.join(dir, w.spec.nodeName, 'gluster', NS, `shared-${w.spec.volumeReplica!.index}`);
      const startedFor = fs.readFileSync(path.join(runDir, 'shd.started-for'), 'utf8').split('\n')[0];
      return !!told?.includes(joined) && startedFor === told && w.status?.volumeReplica?.brick?.selfHeal === 'Running';
    }), 30_000, 200);
  });

  it('heals what a brick missed while it stood still unnoticed: the controller restarts the idle self-heal daemons', async () => {
    // SIGSTOP, not a kill: the idle self-heal daemons send the brick nothing, so they never see it go nor
    // come back, and at the default crawl (600 s) nothing would heal what it missed (docs/volumes.md).
    await client.create('Volume', { metadata: { name: 'still', namespace: NS }, spec: { size: '64Mi', replicas: 3, driver: 'gluster', options: { 'network.ping-timeout': '2' } } } as Volume);
    await eventually('still Ready', async () => (await client.get('Volume', NS, 'still'))?.status?.phase === 'Ready', 60_000, 200);
    const items = (await client.list('WorkItem', { namespace: NS })).items.filter((w: WorkItem) => w.spec.owner.name === 'still').sort((a, b) => a.spec.volumeReplica!.index - b.spec.volumeReplica!.index);
    const stillMnt = path.join(dir, 'mnt-still');
    const stillMount = await mountVolume(items[0]!.spec.volumeReplica!.brick!.clientVolfile!, stillMnt, dir);
    const stopped = items[2]!.status!.volumeReplica!.brick!.pid!;
    try {
      process.kill(stopped, 'SIGSTOP');
      fs.writeFileSync(path.join(stillMnt, 'missed.bin'), randomBytes(2 ** 20));
      const sum = sha(path.join(stillMnt, 'missed.bin'));
      process.kill(stopped, 'SIGCONT');
      const onBrick2 = path.join(items[2]!.spec.volumeReplica!.brick!.path, 'missed.bin');
      await eventually('missed.bin healed onto brick 2 and no heal pending', async () => {
        const now = (await client.list('WorkItem', { namespace: NS })).items.filter((w: WorkItem) => w.spec.owner.name === 'still');
        return fs.existsSync(onBrick2) && sha(onBrick2) === sum && now.every((w) => w.status?.volumeReplica?.brick?.pendingHeals === 0);
      }, 75_000, 500);
      const asked = (await client.list('WorkItem', { namespace: NS })).items.filter((w: WorkItem) => w.spec.owner.name === 'still').map((w) => w.spec.volumeReplica!.brick!.recrawl);
      expect(asked.every((r) => /#0$/.test(r ?? '')), 'every brick was asked to crawl again').to.equal(true);
    } finally {
      try { process.kill(stopped, 'SIGCONT'); } catch { /* gone */ }
      await stillMount.stop();
    }
    await client.delete('Volume', NS, 'still');
    await eventually('still gone', async () => !(await client.get('Volume', NS, 'still')), 60_000, 200);
  });

  it('raised past the nodes that fit, serves on the bricks it has, self-heal daemons running; the new brick, once it fits, joins, and is healed once the instance mounting it took the graph naming it', async () => {
    const raisedBricks = async () => (await client.list('WorkItem', { namespace: NS })).items.filter((w: WorkItem) => w.spec.owner.name === 'raised').sort((a, b) => a.spec.volumeReplica!.index - b.spec.volumeReplica!.index);
    await client.create('Volume', { metadata: { name: 'raised', namespace: NS }, spec: { size: '64Mi', replicas: 2, driver: 'gluster' } } as Volume);
    await eventually('raised Ready', async () => (await client.get('Volume', NS, 'raised'))?.status?.phase === 'Ready', 60_000, 200);
    const two = await raisedBricks();
    const spare = ['node-a', 'node-b', 'node-c'].find((n) => !two.some((w) => w.spec.nodeName === n))!;
    const raisedMnt = path.join(dir, 'mnt-raised');
    let raisedMount: GlusterProcess | undefined;
    try {
      await client.patch('Node', NS, spare, { spec: { unschedulable: true } });
      raisedMount = await mountVolume(two[0]!.spec.volumeReplica!.brick!.clientVolfile!, raisedMnt, dir);
      fs.writeFileSync(path.join(raisedMnt, 'before.bin'), randomBytes(2 ** 20));
      // An instance mounts it too: the copy onto the raised brick waits for its mount to take the graph naming it (copy-gate.ts).
      await client.create('Instance', { metadata: { name: 'raised-user', namespace: NS }, spec: { memory: '16Mi', terminationGracePeriodSeconds: 1, volumes: [{ name: 'data', volumeName: 'raised' }], process: { command: ['sleep', '600'] } } } as Instance);
      await eventually('raised-user Running', async () => (await client.get('Instance', NS, 'raised-user'))?.status?.phase === 'Running', 60_000, 200);
      await client.patch('Volume', NS, 'raised', { spec: { replicas: 3 } });
      await eventually('the third replica Pending, waiting for a node', async () => (await client.get('Volume', NS, 'raised'))?.status?.replicas?.find((r) => r.index === 2)?.state === 'Pending', 30_000, 200);
      // The graphs once went with the layout: every self-heal daemon stopped, and every mount (instances' too) lost its volfile.
      const graphs = async () => {
        const names = (volfile: string | undefined) => [1, 2].map((i) => volfile?.includes(`raised-client-${i}`));
        const mountGraph = glusterMount((await client.get('Volume', NS, 'raised'))!)?.volfile;
        return [...(await raisedBricks()).map((w) => [...names(w.spec.volumeReplica!.brick!.clientVolfile), w.status?.volumeReplica?.brick?.selfHeal]), names(mountGraph)];
      };
      const kept = [[true, false, 'Running'], [true, false, 'Running'], [true, false]];
      // Nothing about the two bricks changes, so nothing may flap either: checked for 4 s.
      for (const deadline = Date.now() + 4_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) expect(await graphs()).to.deep.equal(kept);
      fs.writeFileSync(path.join(raisedMnt, 'while-raised.bin'), randomBytes(2 ** 20));
      await client.patch('Node', NS, spare, { spec: { unschedulable: null } });
      const third = await until('a third brick on the spare node', async () => (await raisedBricks()).find((w) => w.spec.volumeReplica!.index === 2 && w.spec.nodeName === spare), 30_000);
      await eventually('the Volume saying why nothing is copied onto the third brick yet', async () => ((await client.get('Volume', NS, 'raised'))?.status?.replicas?.find((r) => r.index === 2)?.message ?? '').includes('copy the data onto this one once they may'), 15_000, 100);
      const heldSeenAt = Date.now();
      // Meanwhile the instance's mount reads everything: the joined, empty brick is marked as owed, never read.
      // (Between its start and its join it is not marked yet: docs/volumes.md, "Not yet".)
      await eventually('the third brick joined', async () => !!(await raisedBricks())[2]?.status?.volumeReplica?.brick?.joinedAt, 15_000, 100);
      const userNode = (await client.get('Instance', NS, 'raised-user'))!.status!.nodeName!;
      expect(fs.readdirSync(path.join(dir, userNode, 'mounts', NS, 'raised')).sort()).to.include.members(['before.bin', 'while-raised.bin']);
      expect(fs.existsSync(path.join(third.spec.volumeReplica!.brick!.path, 'before.bin')), 'not copied while held').to.equal(false);
      for (const f of ['before.bin', 'while-raised.bin']) {
        const onThird = path.join(third.spec.volumeReplica!.brick!.path, f);
        const sum = sha(path.join(raisedMnt, f));
        await eventually(`${f} healed onto the third brick`, () => fs.existsSync(onThird) && sha(onThird) === sum, 60_000, 250);
      }
      expect(Date.now() - heldSeenAt, 'copied only after the mounts had their time to switch').to.be.at.least(8_000);
      await eventually('raised Ready, its mount naming three bricks', async () => {
        const v = await client.get('Volume', NS, 'raised');
        return v?.status?.phase === 'Ready' && v.status.readyReplicas === 3 && !!glusterMount(v)?.volfile.includes('raised-client-2');
      }, 60_000, 200);
    } finally {
      await client.delete('Instance', NS, 'raised-user').catch(() => undefined);
      await eventually('raised-user gone', async () => !(await client.get('Instance', NS, 'raised-user')), 60_000, 200).catch(() => undefined);
      await raisedMount?.stop();
      await client.patch('Node', NS, spare, { spec: { unschedulable: null } }).catch(() => undefined);
    }
    await client.delete('Volume', NS, 'raised');
    await eventually('raised gone', async () => !(await client.get('Volume', NS, 'raised')), 60_000, 200);
  });

  it('deleting the Volume stops every brick and removes its directory', async () => {
    unmount(mnt);
    await mount?.stop();
    mount = undefined;
    const items = await bricks();
    await client.delete('Volume', NS, 'shared');
    await eventually('the Volume gone', async () => !(await client.get('Volume', NS, 'shared')), 60_000, 200);
    for (const w of items) {
      expect(alive(w.status!.volumeReplica!.brick!.pid!), `brick on ${w.spec.nodeName}`).to.equal(false);
      expect(fs.existsSync(w.spec.volumeReplica!.brick!.path)).to.equal(false);
    }
  });
});
