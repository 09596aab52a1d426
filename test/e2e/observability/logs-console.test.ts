/**
 * Issue 16, acceptance 1: instance output and VM consoles through the
 * agent's own tunnel, with `cairn server`, real agents joined with node
 * credentials, and real qemu booting the test guest.
 *   - `cairn logs` (tail, since, previous, follow) of a process instance, and
 *     a follow that survives its agent being killed and started again, losing
 *     no line;
 *   - `cairn console` of a VM shows its heartbeat and echoes a typed line;
 *   - a process instance's console is refused with a hint;
 *   - a node credential cannot open another node's tunnel nor read logs (403);
 *   - a request for an instance whose node is down gets a 503 naming it.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import type { Instance } from '../../../api/instance.js';
import { CONSOLE_PROTOCOL, TUNNEL_PROTOCOL } from '../../../api/tunnel.js';
import { startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';
import { spawnCairn, type StreamingCli } from '../../support/streaming-cli.js';
import { testGuest } from '../../support/test-guest.js';

const NODES = ['node-a', 'node-b'];

describe('instance logs and VM consoles through the agent tunnel (e2e)', function () {
  this.timeout(180_000);
  let c: TestCluster;
  const streams: StreamingCli[] = [];
  const ns = () => c.name;
  const get = (name: string) => c.client.get('Instance', ns(), name) as Promise<Instance | undefined>;
  const running = (name: string) => eventually(`${name} Running`, async () => (await get(name))?.status?.phase === 'Running', 90_000, 100).then(() => get(name) as Promise<Instance>);
  const follow = (args: string[]) => {
    const s = spawnCairn([...args, '--kubeconfig', c.kubeconfig]);
    streams.push(s);
    return s;
  };
  /** The numbers of the `tick N` lines printed so far. */
  const ticks = (text: string) => [...text.matchAll(/^tick (\d+)$/gm)].map((m) => Number(m[1]));

  before(async () => {
    testGuest();
    // A 10 s node lease: the agent killed below is back long before its instances' fencing deadline
    // (the test timings' 3 s lease would leave a loaded machine too little time, and the counter would restart).
    c = await startTestCluster({ agents: NODES, join: true, spec: { failureDetection: { heartbeatIntervalSeconds: 1, nodeLeaseDurationSeconds: 10, failoverGracePeriodSeconds: 1 } } });
    // A counter printed every 100 ms: a lost or repeated line shows as a gap or a repeat.
    await c.client.create('Instance', { metadata: { name: 'counter', namespace: ns() }, spec: { cpus: 1, memory: '32Mi', placement: { nodeName: 'node-a' }, process: { command: ['/bin/sh', '-c', 'i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.1; done'] } } });
    await running('counter');
  });
  after(async () => {
    await Promise.all(streams.map((s) => s.stop()));
    await c?.cleanup();
  });

  it('cairn logs prints the output; --tail picks the last lines', async () => {
    await eventually('10 ticks', async () => ticks((await c.cairn(['logs', 'instance', 'counter'])).stdout).length >= 10, 20_000, 200);
    const all = await c.cairn(['logs', 'instance', 'counter']);
    expect(all.code, all.stderr).to.equal(0);
    const numbers = ticks(all.stdout);
    expect(numbers.slice(0, 3)).to.deep.equal([1, 2, 3]);
    const tail = await c.cairn(['logs', 'instance/counter', '--tail', '3']);
    expect(tail.stdout.trim().split('\n')).to.have.length(3);
    const since = await c.cairn(['logs', 'instance', 'counter', '--since', '1h']);
    expect(ticks(since.stdout)[0]).to.equal(1);
  });

  it('cairn logs -f streams new lines, and survives the agent reconnecting without losing or repeating one', async () => {
    const f = follow(['logs', 'instance', 'counter', '-f', '--tail', '1']);
    await eventually('follow shows new ticks', async () => ticks(f.stdout()).length >= 5, 20_000, 100);
    const first = ticks(f.stdout())[0]!;
    // Kill the agent: its tunnel drops; the instance keeps running (within the fencing window) and the follow waits.
    await c.agents.get('node-a')!.kill9();
    await c.startAgent('node-a');
    const before = ticks(f.stdout()).length;
    await eventually('ticks flow again after the reconnect', async () => ticks(f.stdout()).length >= before + 20, 30_000, 100);
    const seen = ticks(f.stdout());
    expect(seen, 'contiguous, from the first tick shown').to.deep.equal(seen.map((_, i) => first + i));
    expect(f.stdout()).not.to.include('[cairn]');
  });

  it('shows the current run by default and the runs before it with --previous', async () => {
    const before = ticks((await c.cairn(['logs', 'instance', 'counter'])).stdout).length;
    const r = await c.cairn(['restart', 'instance', 'counter']);
    expect(r.code, r.stderr).to.equal(0);
    await eventually('counter restarted', async () => ((await get('counter'))?.status?.restarts ?? 0) >= 1 && (await get('counter'))?.status?.phase === 'Running', 30_000, 100);
    await eventually('the new run prints', async () => ticks((await c.cairn(['logs', 'instance', 'counter'])).stdout).length >= 3, 20_000, 100);
    const current = ticks((await c.cairn(['logs', 'instance', 'counter'])).stdout);
    expect(current.slice(0, 3), 'the new run counts from 1').to.deep.equal([1, 2, 3]);
    const previous = ticks((await c.cairn(['logs', 'instance', 'counter', '--previous'])).stdout);
    expect(previous[0]).to.equal(1);
    expect(previous.length, 'the earlier run, whole').to.be.at.least(before);
    expect(previous, 'contiguous: one run').to.deep.equal(previous.map((_, i) => i + 1));
  });

  it("opens a VM's serial console: the heartbeat shows and a typed line is echoed", async () => {
    const g = testGuest();
    await c.client.create('Instance', { metadata: { name: 'vm', namespace: ns() }, spec: { driver: 'qemu', memory: '128Mi', placement: { nodeName: 'node-b' }, terminationGracePeriodSeconds: 2, qemu: { kernel: g.kernel, initrd: g.initrd, cmdline: g.cmdline, readinessMarker: g.marker } } });
    await running('vm');
    const session = follow(['console', 'instance', 'vm']);
    await eventually('heartbeats on the console', async () => /CAIRN-HEARTBEAT seq=\d+/.test(session.stdout()), 30_000, 100);
    session.write('hello-from-the-test\r');
    await eventually('the guest echoes the line', async () => session.stdout().includes('CAIRN-ECHO hello-from-the-test'), 20_000, 100);
    expect(await session.stop()).to.be.oneOf([0, 130, null]);
    const logs = await c.cairn(['logs', 'instance', 'vm', '--tail', '200']);
    expect(logs.stdout).to.include('CAIRN-ECHO hello-from-the-test');
  });

  it('cairn token revoke ends the console and the log follow opened with that token within seconds', async () => {
    const kubeconfig = path.join(c.dir, 'eve.kubeconfig');
    const made = await c.cairn(['user', 'create', 'eve', '--role', 'operator', '-o', kubeconfig]);
    expect(made.code, made.stderr).to.equal(0);
    const tokenId = (file: string) => /token: *([a-z0-9]+)\./.exec(fs.readFileSync(file, 'utf8'))![1]!;
    const session = spawnCairn(['console', 'instance', 'vm', '-n', ns(), '--kubeconfig', kubeconfig]);
    const tail = spawnCairn(['logs', '-f', 'instance', 'counter', '-n', ns(), '--kubeconfig', kubeconfig]);
    streams.push(session, tail);
    const seen = () => ({ console: session.stderr().slice(-300), follow: tail.stderr().slice(-300) });
    await eventually('the console and the follow streaming', async () => /CAIRN-HEARTBEAT/.test(session.stdout()) && ticks(tail.stdout()).length > 0, 30_000, 100, seen);
    const revoked = await c.cairn(['token', 'revoke', tokenId(kubeconfig)]);
    expect(revoked.code, revoked.stderr).to.equal(0);
    const ended = await Promise.race([Promise.all([session.exited, tail.exited]), new Promise((r) => setTimeout(r, 15_000, 'still running'))]);
    expect(ended, 'both ended').to.not.equal('still running');
    expect(session.stderr()).to.match(/the console ended: token \w+ was revoked/);
    expect(tail.stdout()).to.match(/\[cairn\] the log follow ended: token \w+ was revoked/);
  });

  it('refuses the console of a process instance with a hint', async () => {
    const r = await c.cairn(['console', 'instance', 'counter']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/process instance, which has no serial console.*cairn logs instance counter/);
  });

  it("refuses a node credential another node's tunnel and any log (403)", async () => {
    const credential = JSON.parse(fs.readFileSync(path.join(c.dir, 'agents', 'node-a', 'node-credential.json'), 'utf8')) as { token: string };
    const ca = fs.readFileSync(path.join(c.server.dataDir, 'pki', 'ca.crt'));
    const base = `${c.server.url.replace(/^http/, 'ws')}/apis/cairn.dev/v1alpha1/namespaces/${ns()}`;
    const refused = (url: string, protocol: string) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(url, [protocol], { ca, headers: { Authorization: `Bearer ${credential.token}` } });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => reject(new Error(`${url} was opened`)));
        ws.on('error', reject);
      });
    expect(await refused(`${base}/nodes/node-b/tunnel`, TUNNEL_PROTOCOL)).to.equal(403);
    expect(await refused(`${base}/instances/vm/console`, CONSOLE_PROTOCOL)).to.equal(403);
    const log = await fetchAs(credential.token, ca, `${c.server.url}/apis/cairn.dev/v1alpha1/namespaces/${ns()}/instances/counter/log`);
    expect(log.status).to.equal(403);
  });

  it('answers 503 naming the node when the instance runs on a node whose agent is down', async () => {
    await c.agents.get('node-b')!.stop(3000);
    try {
      await eventually('node-b tunnel gone', async () => (await c.cairn(['logs', 'instance', 'vm', '--tail', '1'])).code !== 0, 20_000, 200);
      const r = await c.cairn(['logs', 'instance', 'vm', '--tail', '1']);
      expect(r.stderr).to.match(/node node-b, which runs instance .*\/vm, has no tunnel open to the apiserver/);
    } finally {
      await c.startAgent('node-b');
    }
  });

  it("a node credential revoked: its agent's tunnel closes within seconds, and the agent cannot open another with it", async () => {
    const credential = JSON.parse(fs.readFileSync(path.join(c.dir, 'agents', 'node-a', 'node-credential.json'), 'utf8')) as { token: string };
    expect((await c.cairn(['token', 'revoke', credential.token.split('.')[0]!])).code).to.equal(0);
    await eventually('logs of node-a refused: its tunnel is gone', async () => /has no tunnel open/.test((await c.cairn(['logs', 'instance', 'counter', '--tail', '1'])).stderr), 15_000, 200);
  });
});

/** A GET with a bearer token and CA, as a node's agent would send it. */
async function fetchAs(token: string, ca: Buffer, url: string): Promise<{ status: number; text: string }> {
  const https = await import('node:https');
  return new Promise((resolve, reject) => {
    https.get(url, { ca, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}
