/**
 * VMs (issue 6), measured side by side in one run: boot-to-Ready and live
 * migration (total time and downtime) of the test guest under TCG, for each
 * guest size, once as a bare qemu driven by this script over QMP and once
 * through Cairn (a real `cairn server` with its controller and two `cairn
 * agent` processes). The difference is the agent's and controller's
 * overhead; qemu's own share is the bare column.
 *
 * Bare boot: spawn qemu with the driver's own command line (qemuArgs), time
 * until the readiness marker is on the console. Cairn boot: create the
 * Instance, time until its Ready condition is True.
 * Bare migration: a paused target (-incoming defer -S), migrate-incoming,
 * migrate, poll query-migrate until completed, cont on the target; qemu's
 * total-time and downtime, and the wall time from migrate to cont. Cairn
 * migration: set spec.migrateTo, time until status.migration is Completed
 * and the Instance Ready on the target; status.migration's totalTimeMs and
 * downtimeMs (which include the lease hand-over and the resume).
 *
 * Usage: `npm run bench:qemu [-- --runs 5 --sizes 128,512]`. Prints medians.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Instance } from '../../api/instance.js';
import { QEMU_BINARY } from '../../agent/drivers/qemu/runtime.js';
import { qemuArgs } from '../../agent/drivers/qemu/command.js';
import { QmpClient, withQmp } from '../../agent/drivers/qemu/qmp.js';
import { startTestCluster, type TestCluster } from '../../test/support/cairn-cli.js';
import { testGuest, type TestGuest } from '../../test/support/test-guest.js';
import { fmt, median, runBenchmark } from './lib.js';

const MiB = 1024 * 1024;
const NS = 'demo';

interface Figures {
  boot: number;
  migrationTotal: number;
  migrationDowntime: number;
  migrationWall: number;
}

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const runs = Number(flag('runs', '5'));
const sizes = flag('sizes', '128,512').split(',').map(Number);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-qemu-bench-'));
const children = new Set<ChildProcess>();
let cluster: TestCluster | undefined;

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 120_000, every = 10): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(every);
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** A bare qemu with the driver's command line, in its own directory. */
function bareQemu(name: string, guest: TestGuest, sizeMiB: number, incoming: boolean): { child: ChildProcess; log: string; control: string } {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  const paths = { consoleLog: path.join(dir, 'console.log'), consoleSocket: path.join(dir, 'console.sock'), qmpSocket: path.join(dir, 'qmp.sock'), controlSocket: path.join(dir, 'qmp-control.sock'), pidFile: path.join(dir, 'qemu.pid') };
  const spec = { driver: 'qemu' as const, runState: 'Running' as const, cpus: 1, memory: `${sizeMiB}Mi`, qemu: { kernel: guest.kernel, initrd: guest.initrd, cmdline: guest.cmdline } };
  const child = spawn(QEMU_BINARY, qemuArgs({ instance: `bench/${name}`, spec, memoryBytes: sizeMiB * MiB, accelerator: 'tcg', disks: [], paths, incoming }), { stdio: 'ignore' });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return { child, log: paths.consoleLog, control: paths.controlSocket };
}

const markerIn = (file: string, marker: string) => (fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes(marker) ? true : undefined);

async function bareRun(guest: TestGuest, sizeMiB: number, i: number): Promise<Figures> {
  const t0 = performance.now();
  const src = bareQemu(`src-${sizeMiB}-${i}`, guest, sizeMiB, false);
  await until('bare boot', () => markerIn(src.log, guest.marker));
  const boot = performance.now() - t0;
  const dst = bareQemu(`dst-${sizeMiB}-${i}`, guest, sizeMiB, true);
  await until('target QMP socket', () => (fs.existsSync(dst.control) ? true : undefined));
  const port = await freePort();
  await withQmp(dst.control, (q) => q.execute('migrate-incoming', { uri: `tcp:127.0.0.1:${port}` }));
  const source = await QmpClient.connect(src.control);
  try {
    await source.execute('migrate-set-parameters', { 'downtime-limit': 300, 'max-bandwidth': 100 * 1024 * MiB });
    const t1 = performance.now();
    await source.execute('migrate', { uri: `tcp:127.0.0.1:${port}` });
    const info = await until('bare migration', async () => {
      const q = await source.execute<{ status: string; 'total-time'?: number; downtime?: number }>('query-migrate');
      if (q.status === 'failed') throw new Error('bare migration failed');
      return q.status === 'completed' ? q : undefined;
    });
    await withQmp(dst.control, (q) => q.execute('cont'));
    const wall = performance.now() - t1;
    return { boot, migrationTotal: info['total-time'] ?? NaN, migrationDowntime: info.downtime ?? NaN, migrationWall: wall };
  } finally {
    source.close();
    for (const c of [src.child, dst.child]) c.kill('SIGKILL');
  }
}

const ready = (vm: Instance | undefined, node?: string) =>
  vm?.status?.phase === 'Running' && vm.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (!node || vm.status.nodeName === node);

async function cairnRun(c: TestCluster, guest: TestGuest, sizeMiB: number, i: number): Promise<Figures> {
  const name = `vm-${sizeMiB}-${i}`;
  const get = () => c.client.get('Instance', NS, name);
  const t0 = performance.now();
  await c.client.create('Instance', {
    metadata: { name, namespace: NS },
    spec: { driver: 'qemu', memory: `${sizeMiB}Mi`, terminationGracePeriodSeconds: 1, qemu: { kernel: guest.kernel, initrd: guest.initrd, cmdline: guest.cmdline, readinessMarker: guest.marker } },
  });
  const booted = await until(`${name} Ready`, async () => {
    const vm = await get();
    return ready(vm) ? vm : undefined;
  });
  const boot = performance.now() - t0;
  const to = booted!.status!.nodeName === 'node-a' ? 'node-b' : 'node-a';
  const t1 = performance.now();
  await c.client.patch('Instance', NS, name, { spec: { migrateTo: to } });
  const moved = await until(`${name} migrated`, async () => {
    const vm = await get();
    if (vm?.status?.migration?.phase === 'Failed') throw new Error(`migration of ${name} failed: ${vm.status.migration.message}`);
    return vm?.status?.migration?.phase === 'Completed' && ready(vm, to) ? vm : undefined;
  });
  const wall = performance.now() - t1;
  await c.client.delete('Instance', NS, name);
  await until(`${name} deleted`, async () => ((await get()) ? undefined : true), 60_000, 100);
  return { boot, migrationTotal: moved!.status!.migration!.totalTimeMs ?? NaN, migrationDowntime: moved!.status!.migration!.downtimeMs ?? NaN, migrationWall: wall };
}

function medians(all: Figures[]): Figures {
  const m = (k: keyof Figures) => median(all.map((f) => f[k]));
  return { boot: m('boot'), migrationTotal: m('migrationTotal'), migrationDowntime: m('migrationDowntime'), migrationWall: m('migrationWall') };
}

function printTable(sizeMiB: number, bare: Figures, cairn: Figures): void {
  console.log(`\n${sizeMiB} MiB guest, TCG, median of ${runs} run(s) (ms)`);
  console.log('figure                          bare qemu      cairn   overhead');
  const row = (label: string, b: number, c: number) => console.log(`${label.padEnd(30)} ${fmt(b).padStart(10)} ${fmt(c).padStart(10)} ${`${fmt(c - b)} (${(c / b).toFixed(2)}x)`.padStart(18)}`);
  row('boot to Ready', bare.boot, cairn.boot);
  row('migration total (qemu/status)', bare.migrationTotal, cairn.migrationTotal);
  row('migration downtime', bare.migrationDowntime, cairn.migrationDowntime);
  row('migration wall (request→running)', bare.migrationWall, cairn.migrationWall);
}

async function main(): Promise<boolean> {
  const guest = testGuest();
  cluster = await startTestCluster({ agents: ['node-a', 'node-b'] });
  for (const size of sizes) {
    const bare: Figures[] = [];
    const viaCairn: Figures[] = [];
    // Alternate the two so drift in the machine's load hits both alike.
    for (let i = 0; i < runs; i++) {
      bare.push(await bareRun(guest, size, i));
      viaCairn.push(await cairnRun(cluster, guest, size, i));
      const [b, c] = [bare.at(-1)!, viaCairn.at(-1)!];
      console.error(`  ${size} MiB run ${i + 1}: boot ${fmt(b.boot)}/${fmt(c.boot)} ms, migration wall ${fmt(b.migrationWall)}/${fmt(c.migrationWall)} ms, downtime ${fmt(b.migrationDowntime)}/${fmt(c.migrationDowntime)} ms (bare/cairn)`);
    }
    printTable(size, medians(bare), medians(viaCairn));
  }
  return true;
}

async function cleanup(): Promise<void> {
  for (const c of children) c.kill('SIGKILL');
  await cluster?.cleanup();
  fs.rmSync(work, { recursive: true, force: true });
}

runBenchmark(main, cleanup, 60 * 60_000);
