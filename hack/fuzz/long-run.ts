/**
 * The long fuzz run of issue 17: `npm run fuzz [-- --requests 100000 --seed N --concurrency 8]`.
 * Sends generated requests (a random seed unless given; it is printed, so a
 * finding can be replayed) to `cairn apiserver` as its own process, while a
 * probe renews a Lease every second as a node agent would. Targets: no 5xx,
 * no reset, no request unanswered; event-loop delay p99 < 200 ms and max
 * < 1 s; lease renewals p99 ≤ 1 s; the server's RSS back within 10 % of its
 * size after a warm-up once the run is over. Exit status: 0 targets met,
 * 3 a target missed, 1 the run failed. FUZZ_CPU_PROF=<dir> profiles the server.
 */
import { expectStatus, fmt, numberArg, percentile, procStatusMiB, runBenchmark } from '../bench/lib.js';
import { startLeaseProbe } from './lease-probe.js';
import { describeFindings, runFuzz, type FuzzReport } from './runner.js';
import { startFuzzTarget, type FuzzTarget } from './target.js';

const REQUESTS = numberArg('requests', 100_000);
const CONCURRENCY = numberArg('concurrency', 8);
const SEED = numberArg('seed', Math.floor(Math.random() * 2 ** 31));
const WARMUP = Math.min(5_000, Math.floor(REQUESTS / 10));
const SETTLE_MS = 15_000;

let target: FuzzTarget | undefined;

async function main(): Promise<boolean> {
  console.log(`fuzz: ${REQUESTS} requests, concurrency ${CONCURRENCY}, seed ${SEED} (replay: npm run fuzz -- --seed ${SEED})`);
  target = await startFuzzTarget(CONCURRENCY + 1);
  const t = target;
  // The warm-up loads every module and fills caches, so the RSS measured after it is the server's working size.
  const warm = await runFuzz(t.api, { count: WARMUP, concurrency: CONCURRENCY, seed: SEED + 1_000_000 });
  const rssBefore = procStatusMiB(t.pid);
  // A Cluster of its own: the fuzz may well delete its namespaces.
  await expectStatus(t.api, [201], 'POST', '/apis/cairn.dev/v1alpha1/clusters', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: 'fuzz-probe' } });
  const probe = await startLeaseProbe(t.api, 'fuzz-probe', 'probe-node', 1000);
  const report = await runFuzz(t.api, { count: REQUESTS, concurrency: CONCURRENCY, seed: SEED, onProgress: (n) => n % 10_000 === 0 && console.log(`  ${n} sent`) });
  const renewals = await probe.stop();
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const rssAfter = procStatusMiB(t.pid);
  return summarize([warm, report], renewals, rssBefore, rssAfter);
}

function summarize([warm, r]: FuzzReport[], renewals: number[], rssBefore: number, rssAfter: number): boolean {
  const findings = [...describeFindings(warm), ...describeFindings(r)];
  const rows: [string, string, string, boolean][] = [
    ['requests (warm-up + run)', `${warm.sent} + ${r.sent} in ${fmt(r.seconds)} s (${fmt(r.sent / r.seconds)}/s)`, '', true],
    ['answers by status', Object.entries(r.byStatus).map(([s, n]) => `${s}:${n}`).join(' '), '', true],
    ['5xx answers', String(warm.serverErrorCount + r.serverErrorCount), '0', warm.serverErrorCount + r.serverErrorCount === 0],
    ['connections reset', String(warm.resetCount + r.resetCount), '0', warm.resetCount + r.resetCount === 0],
    ['requests unanswered', String(warm.hangCount + r.hangCount), '0', warm.hangCount + r.hangCount === 0],
    ['event-loop delay windows unmeasured', String(warm.loopUnmeasured + r.loopUnmeasured), '0', warm.loopUnmeasured + r.loopUnmeasured === 0],
    ['event-loop delay p99 (worst window, ms)', fmt(r.loopP99Ms), '< 200', r.loopP99Ms < 200],
    ['event-loop delay max (ms)', fmt(Math.max(warm.loopMaxMs, r.loopMaxMs)), '< 1000', Math.max(warm.loopMaxMs, r.loopMaxMs) < 1000],
    ['lease renewals p50 / p99 / max (ms)', `${fmt(percentile(renewals, 50))} / ${fmt(percentile(renewals, 99))} / ${fmt(Math.max(...renewals))} (${renewals.length})`, '≤ 1000', percentile(renewals, 99) <= 1000],
    ['apiserver RSS after warm-up → after the run (MiB)', `${fmt(rssBefore, 1)} → ${fmt(rssAfter, 1)} (${fmt((rssAfter / rssBefore - 1) * 100, 1)} %)`, '≤ +10 %', rssAfter <= rssBefore * 1.1],
  ];
  for (const [what, value, goal, ok] of rows) console.log(`  ${what.padEnd(50)} ${value.padEnd(40)} ${goal.padEnd(7)} ${goal ? (ok ? 'PASS' : 'FAIL') : ''}`);
  for (const f of findings) console.log(`  finding: ${f}`);
  return rows.every(([, , , ok]) => ok);
}

runBenchmark(main, async () => void (await target?.stop()), 3 * 3600_000);
