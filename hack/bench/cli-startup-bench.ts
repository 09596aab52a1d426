/**
 * How fast the `cairn` command answers, timed as whole processes the way a
 * user meets them: `node bin/cairn.js --version`, `--help` and
 * `get instances`, the last against a real `cairn server` (its own etcd, no
 * controller) holding a Cluster and 20 Instances, and `node -e 0`, the
 * floor of any Node.js process, for reference. Runs them in turn, round
 * after round (so a drift of the machine's load hits each alike), after one
 * warm-up round, and prints min / median / max wall time of each. Each run
 * is a blocking spawnSync: waiting for a child on the event loop adds tens
 * of milliseconds of its own.
 *
 * Usage: `npm run bench:cli` or `node dist/hack/bench/cli-startup-bench.js [runs=10]`.
 * Targets: median --version ≤ 150 ms, get instances ≤ 400 ms (exit 3 when
 * one is missed, 1 on failure).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { expectStatus, fmt, median, runBenchmark, targetFromKubeconfig } from './lib.js';

const NS = 'bench';
const INSTANCES = 20;
const RUNS = Number(process.argv[2] ?? 10);

/** One timed command and its target median, if any. */
interface Case {
  /** Arguments of `node bin/cairn.js`, or of node itself with `bare`. */
  args: string[];
  bare?: boolean;
  targetMs?: number;
  /** What its stdout must hold for the run to count. */
  expect: RegExp;
}

const CASES: Case[] = [
  { args: ['-e', '0'], bare: true, expect: /^$/ },
  { args: ['--version'], targetMs: 150, expect: /^\d+\.\d+\.\d+\n$/ },
  { args: ['--help'], expect: /Usage: cairn/ },
  { args: ['get', 'instances'], targetMs: 400, expect: /^NAME\s+PHASE[^]*inst-19/ },
];

let server: CairnProcess | undefined;
let dir: string | undefined;

/** Runs the command once; returns its wall time in ms, throws unless it exits 0 printing what is expected. */
function timeOnce(c: Case, env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, c.bare ? c.args : [CAIRN_BIN, ...c.args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  const ms = performance.now() - started;
  if (r.status === 0 && c.expect.test(r.stdout)) return ms;
  throw new Error(`${label(c)} exited ${r.status ?? r.signal}:\n${r.stdout.slice(0, 500)}${r.stderr.slice(0, 500)}`);
}

function label(c: Case): string {
  return `${c.bare ? 'node' : 'cairn'} ${c.args.join(' ')}`;
}

async function setUp(): Promise<NodeJS.ProcessEnv> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cli-bench-'));
  server = spawnCairn(['server', '--data-dir', dir, '--port', '0', '--no-controller', '--log-level', 'warn', '--kubeconfig-namespace', NS]);
  await server.ready;
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  const admin = targetFromKubeconfig(kubeconfig);
  await expectStatus(admin, [201], 'POST', '/apis/cairn.dev/v1alpha1/clusters', { metadata: { name: NS }, spec: {} });
  for (let i = 0; i < INSTANCES; i++) {
    const spec = { runState: 'Running', driver: 'process', cpus: 1, memory: '32Mi', process: { command: ['/bin/true'] } };
    await expectStatus(admin, [201], 'POST', `/apis/cairn.dev/v1alpha1/namespaces/${NS}/instances`, { metadata: { name: `inst-${i}` }, spec });
  }
  admin.agent.destroy();
  return { ...process.env, KUBECONFIG: kubeconfig };
}

async function main(): Promise<boolean> {
  const env = await setUp();
  console.log(`${RUNS} runs of each after one warm-up, in turn; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} on ${os.cpus().length} cores`);
  const times: number[][] = CASES.map(() => []);
  for (let round = 0; round <= RUNS; round++) {
    for (const [i, c] of CASES.entries()) {
      const ms = timeOnce(c, env);
      if (round > 0) times[i]!.push(ms);
    }
  }
  let ok = true;
  const floor = median(times[0]!);
  for (const [i, c] of CASES.entries()) {
    const t = times[i]!;
    const mid = median(t);
    const over = i === 0 ? '' : `  (node + ${fmt(mid - floor)} ms)`;
    const met = c.targetMs === undefined ? '' : mid <= c.targetMs ? `  target ≤ ${c.targetMs} ms: met` : `  target ≤ ${c.targetMs} ms: NOT met`;
    if (c.targetMs !== undefined && mid > c.targetMs) ok = false;
    console.log(`${label(c).padEnd(20)} min ${fmt(Math.min(...t)).padStart(5)} ms  median ${fmt(mid).padStart(5)} ms  max ${fmt(Math.max(...t)).padStart(5)} ms${over}${met}`);
  }
  return ok;
}

runBenchmark(main, async () => {
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 300_000);
