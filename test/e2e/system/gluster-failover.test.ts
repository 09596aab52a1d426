/**
 * Failover with data (issue 14, acceptance 1): `cairn server` with its
 * controller and four agents, a replica-3 gluster Volume, and a process
 * instance that writes a known file into its mount. The instance's node
 * dies (agent, instance, bricks and mounts, kill -9): the instance runs
 * again on another node and reads the same bytes through that node's
 * mount; the Volume says Degraded, its lost brick is recreated on the
 * fourth node and healed there (same checksum on the new brick), and the
 * Volume is Ready again (acceptance 1). A brick's node down while the
 * instance writes on: the pending heals show in the Volume's status and go
 * to zero once it is back, with what was written meanwhile on its brick
 * (acceptance 2). Two of three bricks down: writes fail, the Volume says
 * QuorumLost with a hint, and nothing is lost after they return
 * (acceptance 3). Deleting the instance and the Volume leaves no brick,
 * mount or directory behind on the nodes still up (acceptance 6).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Instance } from '../../../api/instance.js';
import type { Volume } from '../../../api/volume.js';
import { killMarked, processesWith, startAgentProcess, type AgentProcess } from '../../support/agent-process.js';
import { until } from '../../support/controller-env.js';
import { eventually } from '../../support/eventually.js';
import { killGlusterUnder } from '../../support/gluster.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { tag } from '../agent/harness.js';

const NS = 'glf';
const MARKER = `cairn-glf-e2e-${process.pid}`;
const NODES = ['node-a', 'node-b', 'node-c', 'node-d'];
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Writes known.bin once (with its checksum beside it); on every start records what it reads back, per node, then appends to log.txt. */
function writerCommand(): string[] {
  const script = [
    'cd "$CAIRN_VOLUME_DATA" || exit 1',
    '[ -f known.bin ] || { head -c 4194304 /dev/urandom > known.tmp && sync known.tmp && mv known.tmp known.bin && sha256sum known.bin | cut -d" " -f1 > known.sum; }',
    'sha256sum known.bin | cut -d" " -f1 > "read.tmp" && mv read.tmp "read-on-$CAIRN_NODE"',
    // Then one line every 0.2 s, for as long as writes succeed (they fail without quorum).
    `while true; do date +%s%N >> log.txt 2>/dev/null; sleep 0.2; done # ${tag(MARKER, 'writer')}`,
  ].join('\n');
  return ['sh', '-c', script];
}

describe('system: a gluster Volume fails over with its data, and its lost brick is replaced and healed (issue 14)', function () {
  this.timeout(180_000);
  let server: ServerProcess;
  let client: CairnClient;
  const agents = new Map<string, AgentProcess>();
  let dir: string;

  const volume = async () => (await client.get('Volume', NS, 'data'))!;
  const brickOn = (v: Volume, node: string) => v.status?.replicas?.find((r) => r.nodeName === node && r.state === 'Ready');

  before(async function () {
    this.timeout(60_000);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-glf-'));
    server = await startServerProcess({ controller: true });
    client = new CairnClient(loadKubeConfig({ kubeconfig: server.kubeconfig }));
    await client.create('Cluster', { metadata: { name: NS }, spec: {} });
    for (const n of NODES) agents.set(n, await startAgentProcess({ kubeconfig: server.kubeconfig, cluster: NS, nodeName: n, dataDir: path.join(dir, n), heartbeatInterval: '1s', leaseDuration: '5s' }));
    await eventually('four Ready nodes', async () => (await client.list('Node', { namespace: NS })).items.filter((n) => n.status?.phase === 'Ready').length === 4, 30_000, 200);
  });

  after(async () => {
    for (const a of agents.values()) await a.stop(3000).catch(() => undefined);
    killMarked(MARKER);
    for (const n of NODES) killGlusterUnder(path.join(dir, n));
    await server?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the instance reads the same bytes on another node; the Volume goes Degraded, then Ready with a healed brick on the fourth node', async () => {
    // The writer appends to log.txt every 0.2 s: a heal of it that loses to the writer waits for the next
    // crawl (docs/volumes.md, "Not yet"). A 10 s crawl keeps that inside this test's wait (seen once in CI).
    const options = { 'cluster.heal-timeout': '10' };
    await client.create('Volume', { metadata: { name: 'data', namespace: NS }, spec: { size: '256Mi', replicas: 3, driver: 'gluster', options } } as Volume);
    await eventually('the Volume Ready', async () => (await volume()).status?.phase === 'Ready', 60_000, 200).catch(async (err: Error) => {
      const items = (await client.list('WorkItem', { namespace: NS })).items.map((w) => ({ name: w.metadata.name, status: w.status }));
      throw new Error(`${err.message}; last seen: ${JSON.stringify({ volume: (await volume()).status, items })}`);
    });
    const bricksBefore = (await volume()).status!.replicas!.map((r) => r.nodeName!);
    await client.create('Instance', {
      metadata: { name: 'writer', namespace: NS },
      spec: { memory: '32Mi', terminationGracePeriodSeconds: 1, volumes: [{ name: 'data', volumeName: 'data' }], process: { command: writerCommand() } },
    } as Instance);
    const first = await until('writer Running', async () => {
      const i = await client.get('Instance', NS, 'writer');
      return i?.status?.phase === 'Running' ? i.status.nodeName : undefined;
    }, 60_000, 200);
    expect(bricksBefore, 'the scheduler prefers a node holding a brick').to.include(first);
    const mount = path.join(dir, first, 'mounts', NS, 'data');
    await eventually('known.bin written and read back', () => fs.existsSync(path.join(mount, `read-on-${first}`)) && fs.readFileSync(path.join(mount, `read-on-${first}`), 'utf8').trim().length === 64, 30_000, 100);
    const written = fs.readFileSync(path.join(mount, 'known.sum'), 'utf8').trim();
    expect(sha(path.join(mount, 'known.bin'))).to.equal(written);

    await agents.get(first)!.kill9();
    for (const p of processesWith(tag(MARKER, 'writer'))) process.kill(p.pid, 'SIGKILL');
    killGlusterUnder(path.join(dir, first));
    agents.delete(first);

    await eventually('the Volume Degraded', async () => (await volume()).status?.conditions?.some((c) => c.type === 'Degraded' && c.status === 'True') === true, 30_000, 200);
    const second = await until('writer Running on another node', async () => {
      const i = await client.get('Instance', NS, 'writer');
      return i?.status?.phase === 'Running' && i.status.nodeName !== first ? i.status.nodeName : undefined;
    }, 60_000, 200);
    const survivor = bricksBefore.find((n) => n !== first)!;
    const survivorBrick = path.join(dir, survivor, 'bricks', NS, `data-${bricksBefore.indexOf(survivor)}`);
    await eventually(`writer read known.bin on ${second}`, () => fs.existsSync(path.join(survivorBrick, `read-on-${second}`)), 30_000, 200);
    expect(fs.readFileSync(path.join(survivorBrick, `read-on-${second}`), 'utf8').trim(), 'the bytes read after failover').to.equal(written);

    const spare = NODES.find((n) => !bricksBefore.includes(n))!;
    await eventually('the Volume Ready again, with a brick on the fourth node', async () => {
      const v = await volume();
      return v.status?.phase === 'Ready' && !!brickOn(v, spare);
    }, 90_000, 500).catch(async (err: Error) => {
      throw new Error(`${err.message}; last seen: ${JSON.stringify((await volume()).status)}`);
    });
    const v = await volume();
    expect(v.status?.conditions?.find((c) => c.type === 'Degraded')).to.include({ status: 'False' });
    const newBrick = path.join(dir, spare, 'bricks', NS, `data-${brickOn(v, spare)!.index}`);
    expect(sha(path.join(newBrick, 'known.bin')), 'the replaced brick healed').to.equal(written);
    // The writer's mount named the new brick down (127.0.0.1 port 1) until it had joined; now at its own address.
    const replaced = brickOn(v, spare)!;
    const served = path.join(dir, second, 'gluster', NS, 'mount-data', 'client.vol');
    const named = () => new RegExp(`volume ${NS}-data-client-${replaced.index}\\n(?:.*\\n)*?\\s*option remote-host (\\S+)\\n\\s*option remote-port (\\d+)`).exec(fs.readFileSync(served, 'utf8'))?.slice(1);
    await eventually("the writer's mount names the new brick at its address", () => named()?.join(':') === `${replaced.brick!.address}:${replaced.brick!.port}`, 15_000, 200).catch((err: Error) => {
      throw new Error(`${err.message}; it names ${named()?.join(':')}`);
    });
  });

  const instanceNode = async () => (await client.get('Instance', NS, 'writer'))!.status!.nodeName!;
  const brickPath = (v: Volume, node: string) => path.join(dir, node, 'bricks', NS, `data-${v.status!.replicas!.find((r) => r.nodeName === node)!.index}`);
  const totalPendingHeals = (v: Volume) => (v.status?.replicas ?? []).reduce((n, r) => n + (r.brick?.pendingHeals ?? 0), 0);
  /** The machine of a node goes down: agent, bricks and mounts killed (-9). */
  const down = async (node: string) => {
    await agents.get(node)!.kill9();
    killGlusterUnder(path.join(dir, node));
    agents.delete(node);
  };
  const up = async (node: string) => {
    agents.set(node, await startAgentProcess({ kubeconfig: server.kubeconfig, cluster: NS, nodeName: node, dataDir: path.join(dir, node), heartbeatInterval: '1s', leaseDuration: '5s' }));
  };
  const lastLine = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n').pop()!;

  it('a brick\'s node down while writes go on: pending heals show in the Volume, then go to zero once it is back, its brick holding what was written meanwhile', async () => {
    // Keep the brick where it is while its node is away (no replacement): this is about healing it.
    await client.patch('Cluster', undefined, NS, { spec: { failover: { recreateLostReplicas: false } } });
    const writerOn = await instanceNode();
    const v = await volume();
    const away = v.status!.replicas!.map((r) => r.nodeName!).find((n) => n !== writerOn)!;
    const mount = path.join(dir, writerOn, 'mounts', NS, 'data');
    await down(away);
    await eventually('pending heals in the Volume status', async () => totalPendingHeals(await volume()) > 0, 20_000, 200);
    const writtenWhileAway = lastLine(path.join(mount, 'log.txt'));
    await up(away);
    await eventually('the Volume Ready with nothing to heal', async () => {
      const now = await volume();
      return now.status?.phase === 'Ready' && totalPendingHeals(now) === 0;
    }, 60_000, 200).catch(async (err: Error) => {
      throw new Error(`${err.message}; last seen: ${JSON.stringify((await volume()).status)}`);
    });
    expect(fs.readFileSync(path.join(brickPath(await volume(), away), 'log.txt'), 'utf8')).to.include(writtenWhileAway);
  });

  it('two of three bricks down: writes fail, the Volume says QuorumLost with a hint, and nothing is lost once they return', async () => {
    const writerOn = await instanceNode();
    const mount = path.join(dir, writerOn, 'mounts', NS, 'data');
    const others = (await volume()).status!.replicas!.map((r) => r.nodeName!).filter((n) => n !== writerOn);
    const before = fs.readFileSync(path.join(mount, 'log.txt'), 'utf8');
    for (const n of others) await down(n);
    await eventually('QuorumLost', async () => (await volume()).status?.conditions?.some((c) => c.type === 'Degraded' && c.reason === 'QuorumLost') === true, 30_000, 200);
    const v = await volume();
    expect(v.status?.message).to.include('too few for quorum').and.include('restart the node or its agent');
    expect(() => fs.writeFileSync(path.join(mount, 'probe.txt'), 'x'), 'a write without quorum').to.throw(/ENOTCONN|EROFS|EIO/);
    for (const n of others) await up(n);
    await eventually('the Volume Ready again', async () => {
      const now = await volume();
      return now.status?.phase === 'Ready' && totalPendingHeals(now) === 0;
    }, 60_000, 200);
    // The mount reconnects to the returned bricks by itself (its clients retry every few seconds).
    const after = await until('the mount reads again', async () => {
      try {
        return fs.readFileSync(path.join(mount, 'log.txt'), 'utf8');
      } catch {
        return undefined;
      }
    }, 30_000, 200);
    expect(after.startsWith(before), 'what was written before is all there').to.equal(true);
    const written = fs.readFileSync(path.join(mount, 'known.sum'), 'utf8').trim();
    for (const r of (await volume()).status!.replicas!) expect(sha(path.join(brickPath(await volume(), r.nodeName!), 'known.bin')), `known.bin on ${r.nodeName}`).to.equal(written);
  });

  it('a mount whose glusterfs client is killed: the instance restarts on its node on a new mount, and its writes reach the volume again', async () => {
    const writerOn = await instanceNode();
    const mount = path.join(dir, writerOn, 'mounts', NS, 'data');
    const pidfile = path.join(dir, writerOn, 'gluster', NS, 'mount-data', 'client.pid');
    const before = (await client.get('Instance', NS, 'writer'))!.status!;
    process.kill(Number(fs.readFileSync(pidfile, 'utf8').trim()), 'SIGKILL');
    const after = await until('writer restarted on its node', async () => {
      const s = (await client.get('Instance', NS, 'writer'))!.status!;
      return s.phase === 'Running' && s.pid !== before.pid ? s : undefined;
    }, 30_000, 200);
    expect(after.nodeName).to.equal(writerOn);
    expect(after.conditions?.find((c) => c.type === 'Ready')?.status).to.equal('True');
    const lines = () => fs.readFileSync(path.join(mount, 'log.txt'), 'utf8').trim().split('\n').length;
    const count = await until('the mount answering again', async () => {
      try {
        return lines();
      } catch {
        return undefined;
      }
    }, 20_000, 200);
    await eventually('new lines from the restarted writer', () => lines() > count + 3, 20_000, 200);
  });

  it('deleting the instance and the Volume leaves no brick, mount or directory on the nodes still up', async () => {
    await client.delete('Instance', NS, 'writer');
    await eventually('writer gone', async () => !(await client.get('Instance', NS, 'writer')), 30_000, 200);
    await client.delete('Volume', NS, 'data');
    await eventually('Volume gone', async () => !(await client.get('Volume', NS, 'data')), 60_000, 200);
    const up = [...agents.keys()].map((n) => path.join(dir, n));
    const mounts = fs.readFileSync('/proc/self/mounts', 'utf8');
    for (const d of up) {
      expect(mounts, `mounts under ${d}`).to.not.include(`${d}/`);
      expect(processesWith(d).filter((p) => /gluster/.test(fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8'))), `gluster processes of ${d}`).to.deep.equal([]);
      expect(fs.readdirSync(path.join(d, 'bricks', NS)).length, `bricks of ${d}`).to.equal(0);
      expect(fs.existsSync(path.join(d, 'mounts', NS, 'data')), `mount dir of ${d}`).to.equal(false);
    }
  });
});
