/**
 * The dashboard and log benchmark (issue 16): `cairn server` with its
 * controller and three agents running 500 process Instances, and headless
 * Chromium (Debian's, through playwright-core) on the dashboard.
 *   - First load, cold cache: from navigation until the instance list shows
 *     all 500 (the page is usable), and the bytes transferred: the
 *     dashboard's files (gzip) and the API's answers.
 *   - One change: from the write (a new Instance) until its row shows.
 *   - Log follow: from an instance printing a line (its clock) until
 *     `cairn logs -f` has it on stdout.
 *
 * Usage: `npm run bench:dashboard [-- --instances 500 --changes 10 --lines 100]`.
 * Exit status 0 done, 1 failed. Every process it starts is stopped on exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium, type Browser, type Page } from 'playwright-core';
import { stopChild } from '../../apiserver/etcd/process.js';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { expectStatus, fmt, killMarked, median, numberArg, percentile, request, runBenchmark, targetFromKubeconfig, type ApiTarget, until } from './lib.js';

const N = numberArg('instances', 500);
const CHANGES = numberArg('changes', 10);
const LINES = numberArg('lines', 100);
const NS = 'bench';
const NODES = ['node-a', 'node-b', 'node-c'];
const GROUP_PATH = '/apis/cairn.dev/v1alpha1';
const MARKER = `dashboard-bench-${process.pid}`;
const CHROMIUM = process.env.CAIRN_CHROMIUM ?? '/usr/bin/chromium';

let server: CairnProcess | undefined;
let dir: string | undefined;
let api: ApiTarget | undefined;
let browser: Browser | undefined;
const children: ChildProcess[] = [];

// The shell stays (its $0 carries the marker, so cleanup finds it); the sleep it waits on ends within a second of it.
const instance = (name: string, command: string[]) => ({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name, namespace: NS }, spec: { cpus: 1, memory: '8Mi', process: { command } } });

/** How many Instances are in each phase (with a sample message per phase, for a run that stalls). */
async function phases(t: ApiTarget): Promise<Record<string, { count: number; message?: string }>> {
  const r = await request(t, 'GET', `${GROUP_PATH}/namespaces/${NS}/instances`);
  const out: Record<string, { count: number; message?: string }> = {};
  for (const i of (JSON.parse(r.body.toString()) as { items: { status?: { phase?: string; message?: string } }[] }).items) {
    const p = (out[i.status?.phase ?? 'None'] ??= { count: 0, message: i.status?.message });
    p.count++;
  }
  return out;
}

/** A page with the session's token in place, counting the bytes it receives (encoded: gzip where served so). */
async function openPage(token: string): Promise<{ page: Page; bytes: () => { assets: number; api: number } }> {
  const context = await browser!.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1400, height: 900 } });
  await context.addInitScript((t) => window.sessionStorage.setItem('cairn.token', t), token);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const urls = new Map<string, string>();
  const totals = { assets: 0, api: 0 };
  cdp.on('Network.responseReceived', (e) => urls.set(e.requestId, e.response.url));
  // Watches stream for as long as the page lives: count what they delivered so far too.
  cdp.on('Network.dataReceived', (e) => {
    const url = urls.get(e.requestId) ?? '';
    totals[new URL(url, 'https://x').pathname.startsWith('/ui/') ? 'assets' : 'api'] += e.encodedDataLength;
  });
  return { page, bytes: () => ({ ...totals }) };
}

async function firstLoad(base: string, token: string): Promise<void> {
  const { page, bytes } = await openPage(token);
  const t0 = performance.now();
  await page.goto(`${base}/ui/#/instances`);
  await until(`${N} rows`, 60_000, async () => (await page.getByTestId('instance-row').count()) >= N, 20);
  const ms = performance.now() - t0;
  // The page answers input once the list is there: time a click round trip to show it.
  const t1 = performance.now();
  await page.getByTestId('instance-filter').fill('zzz-nothing');
  await until('the filter applied', 10_000, async () => (await page.getByTestId('instance-row').count()) === 0, 10);
  const inputMs = performance.now() - t1;
  const b = bytes();
  console.log(`  first load (cold cache, ${N} instances): all rows shown ${fmt(ms)} ms after navigation; then a filter keystroke applied in ${fmt(inputMs)} ms`);
  console.log(`  bytes transferred: dashboard files ${fmt(b.assets / 1024, 1)} KiB (gzip), API ${fmt(b.api / 1024, 1)} KiB (lists, access reviews, watches so far)`);
  await page.context().close();
}

async function changeLatency(base: string, token: string, t: ApiTarget): Promise<void> {
  const { page } = await openPage(token);
  await page.goto(`${base}/ui/#/instances`);
  await until(`${N} rows`, 60_000, async () => (await page.getByTestId('instance-row').count()) >= N, 50);
  const times: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const name = `change-${i}`;
    await page.getByTestId('instance-filter').fill(name);
    const t0 = performance.now();
    await expectStatus(t, [201], 'POST', `${GROUP_PATH}/namespaces/${NS}/instances`, instance(name, ['/bin/sh', '-c', 'while :; do sleep 1; done', MARKER]));
    await page.locator(`[data-testid="instance-row"][data-name="${name}"]`).waitFor({ timeout: 10_000 });
    times.push(performance.now() - t0);
  }
  console.log(`  one change (a new Instance) shown in the UI: median ${fmt(median(times))} ms, max ${fmt(Math.max(...times))} ms over ${CHANGES} writes (target ≤ 1000 ms)`);
  await page.context().close();
}

async function logLatency(kubeconfig: string, t: ApiTarget): Promise<void> {
  // Prints its clock (epoch ms) every 50 ms.
  const script = `while :; do echo "t=$(date +%s%3N)"; sleep 0.05; done # ${MARKER}`;
  await expectStatus(t, [201], 'POST', `${GROUP_PATH}/namespaces/${NS}/instances`, instance('clock', ['/bin/sh', '-c', script]));
  await until('clock Running', 60_000, async () => {
    const r = await request(t, 'GET', `${GROUP_PATH}/namespaces/${NS}/instances/clock`);
    return (JSON.parse(r.body.toString()) as { status?: { phase?: string } }).status?.phase === 'Running';
  });
  const follow = spawn(process.execPath, [CAIRN_BIN, 'logs', 'instance', 'clock', '-n', NS, '-f', '--tail', '0', '--kubeconfig', kubeconfig], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(follow);
  const latencies: number[] = [];
  let pending = '';
  follow.stdout.on('data', (chunk: Buffer) => {
    const now = Date.now();
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const l of lines) {
      const m = /^t=(\d+)$/.exec(l);
      if (m) latencies.push(now - Number(m[1]));
    }
  });
  await until(`${LINES} lines`, 60_000, async () => latencies.length >= LINES);
  await stopChild(follow, 2000);
  console.log(`  log follow, instance prints → cairn logs -f shows it: p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms over ${latencies.length} lines`);
}

async function cleanup(): Promise<void> {
  await browser?.close().catch(() => undefined);
  api?.agent.destroy();
  for (const c of children) await stopChild(c, 5000).catch(() => undefined);
  killMarked(MARKER);
  await server?.stop().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

async function main(): Promise<boolean> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-dashboard-bench-'));
  server = spawnCairn(['server', '--data-dir', path.join(dir, 'server'), '--port', '0', '--log-level', 'warn']);
  await server.ready;
  const kubeconfig = path.join(dir, 'server', 'admin.kubeconfig');
  const t = (api = targetFromKubeconfig(kubeconfig, 16));
  const { token } = t;
  const base = t.url.origin;
  await expectStatus(t, [201], 'POST', `${GROUP_PATH}/clusters`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: NS } });
  for (const node of NODES) {
    const args = ['agent', '--kubeconfig', kubeconfig, '--cluster', NS, '--node-name', node, '--data-dir', path.join(dir, node), '--cpus', '1024', '--memory', '64Gi', '--monitor-port', '0', '--log-level', 'error'];
    children.push(spawn(process.execPath, [CAIRN_BIN, ...args], { stdio: ['ignore', 'ignore', 'inherit'] }));
  }
  await until('three Ready nodes', 60_000, async () => {
    const r = await request(t, 'GET', `${GROUP_PATH}/namespaces/${NS}/nodes`);
    return r.status === 200 && (JSON.parse(r.body.toString()) as { items: { status?: { phase?: string } }[] }).items.filter((n) => n.status?.phase === 'Ready').length === NODES.length;
  });
  for (let i = 0; i < N; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, N - i) }, (_, j) => expectStatus(t, [201], 'POST', `${GROUP_PATH}/namespaces/${NS}/instances`, instance(`i-${i + j}`, ['/bin/sh', '-c', 'while :; do sleep 1; done', MARKER]))));
  }
  await until(`${N} Running`, 300_000, async () => ((await phases(t)).Running?.count ?? 0) >= N, 500).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(await phases(t))}`);
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--disable-gpu', '--disable-dev-shm-usage'] });
  console.log(`\nThe dashboard in headless Chromium ${browser.version()}, cairn server and 3 agents running ${N} process Instances (one run):`);
  await firstLoad(base, token);
  await changeLatency(base, token, t);
  await logLatency(kubeconfig, t);
  return true;
}

runBenchmark(main, cleanup, 20 * 60_000);
