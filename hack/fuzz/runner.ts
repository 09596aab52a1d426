/**
 * Sends generated requests to a running apiserver at a fixed concurrency
 * and reports what an operator must never see: 5xx answers, connections
 * reset or left unanswered, and the server's event loop blocked (read from
 * its /metrics, which samples it with perf_hooks.monitorEventLoopDelay).
 * Shared by the fuzz test in `npm test` and the long run (`npm run fuzz`).
 */
import https from 'node:https';
import fc from 'fast-check';
import { request, type ApiTarget } from '../bench/lib.js';
import { fuzzRequest, type FuzzRequest } from './requests.js';

/** What a fuzz run saw. */
export interface FuzzReport {
  sent: number;
  byStatus: Record<string, number>;
  /** 5xx answers, with the request that got them (the first few). */
  serverErrors: { request: FuzzRequest; status: number; text: string }[];
  serverErrorCount: number;
  /** Connections reset or closed before an answer (the first few, and how many). */
  resets: { request: FuzzRequest; error: string }[];
  resetCount: number;
  /** Requests with no answer within the client's timeout (watches end after a second). */
  hangs: { request: FuzzRequest }[];
  hangCount: number;
  /** Requests Node refused to send (characters a URL cannot carry): generated, not the server's doing. */
  unsendable: number;
  /** The server's event-loop delay over the run, from its /metrics: worst p99 of a scrape window, and max. */
  loopP99Ms: number;
  loopMaxMs: number;
  /** Scrape windows whose /metrics gave no event-loop delay: the two figures above leave them out. */
  loopUnmeasured: number;
  seconds: number;
}

const ANSWER_TIMEOUT_MS = 15_000;
const METRICS_EVERY_MS = 2_000;
const KEEP = 20;

type Outcome = { status: number; text: string } | { error: string } | 'hang' | 'unsendable';

/** One request; never rejects. A watch is read until the server ends it (timeoutSeconds=1). */
export function send(t: ApiTarget, r: FuzzRequest): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { Accept: 'application/json' };
    if (r.authorization !== null) headers.Authorization = r.authorization ?? `Bearer ${t.token}`;
    if (r.body !== undefined) {
      headers['Content-Type'] = r.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(r.body);
    }
    let req: ReturnType<typeof https.request>;
    try {
      req = https.request({ host: t.url.hostname, port: t.url.port, method: r.method, path: r.path, agent: t.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => (size += c.length) < 64 * 1024 && chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', (err) => resolve({ error: err.message }));
      });
    } catch {
      return resolve('unsendable');
    }
    const timer = setTimeout(() => {
      resolve('hang');
      req.destroy();
    }, ANSWER_TIMEOUT_MS);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end(r.body);
  });
}

/**
 * The server's event-loop delay since the last scrape (prom-client resets it on each): p99 and max in ms,
 * NaN when /metrics did not give them. Read whole: the fuzz's own requests give apiserver_request_total so
 * many label sets that the Node.js figures at the end lay past the 64 KiB send() keeps of an answer.
 */
export async function scrapeLoopDelay(t: ApiTarget): Promise<{ p99: number; max: number }> {
  const text = await request(t, 'GET', '/metrics').then((r) => (r.status === 200 ? r.body.toString() : ''), () => '');
  const value = (name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(`cairn_apiserver_nodejs_eventloop_lag_${name}_seconds`)) ?? '')?.[2] ?? NaN) * 1000;
  return { p99: value('p99'), max: value('max') };
}

/** Runs `count` generated requests (fast-check `seed`) at `concurrency`; `onProgress` gets the number sent so far now and then. */
export async function runFuzz(t: ApiTarget, opts: { count: number; concurrency: number; seed: number; onProgress?: (sent: number) => void }): Promise<FuzzReport> {
  const report: FuzzReport = { sent: 0, byStatus: {}, serverErrors: [], serverErrorCount: 0, resets: [], resetCount: 0, hangs: [], hangCount: 0, unsendable: 0, loopP99Ms: 0, loopMaxMs: 0, loopUnmeasured: 0, seconds: 0 };
  const started = performance.now();
  await scrapeLoopDelay(t); // starts the first window
  const sampler = setInterval(() => void scrapeLoopDelay(t).then((d) => record(report, d)), METRICS_EVERY_MS);
  const batches = batchesOf(opts.count, opts.seed);
  let next = 0;
  let batch: FuzzRequest[] = [];
  const take = (): FuzzRequest | undefined => {
    if (next >= opts.count) return undefined;
    if (next % BATCH === 0) batch = batches.next().value as FuzzRequest[];
    return batch[next++ % BATCH];
  };
  const worker = async () => {
    for (let r = take(); r; r = take()) {
      tally(report, r, await send(t, r));
      if (report.sent % 1000 === 0) opts.onProgress?.(report.sent);
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
  } finally {
    clearInterval(sampler);
  }
  record(report, await scrapeLoopDelay(t));
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

const BATCH = 1000;

/** The requests, generated a batch at a time (100,000 at once would hold every body in memory). */
function* batchesOf(count: number, seed: number): Generator<FuzzRequest[]> {
  for (let i = 0; i * BATCH < count; i++) yield fc.sample(fuzzRequest, { numRuns: BATCH, seed: seed + i });
}

function record(report: FuzzReport, d: { p99: number; max: number }): void {
  if (!Number.isFinite(d.p99) || !Number.isFinite(d.max)) return void report.loopUnmeasured++;
  report.loopP99Ms = Math.max(report.loopP99Ms, d.p99);
  report.loopMaxMs = Math.max(report.loopMaxMs, d.max);
}

function tally(report: FuzzReport, request: FuzzRequest, o: Outcome): void {
  report.sent++;
  if (o === 'unsendable') return void report.unsendable++;
  if (o === 'hang') return void (report.hangCount++ < KEEP && report.hangs.push({ request }));
  if ('error' in o) return void (report.resetCount++ < KEEP && report.resets.push({ request, error: o.error }));
  report.byStatus[o.status] = (report.byStatus[o.status] ?? 0) + 1;
  if (o.status >= 500 && !isTooLargeResourceVersion(o)) {
    report.serverErrorCount++;
    if (report.serverErrors.length < KEEP) report.serverErrors.push({ request, status: o.status, text: o.text.slice(0, 300) });
  }
}

/**
 * kube's answer to a read at a resourceVersion the store has not reached: 504 with the cause
 * ResourceVersionTooLarge, which client-go meets by reading again without one. An answer to the request,
 * not a server failing (apiserver/errors.ts).
 */
function isTooLargeResourceVersion(o: { status: number; text: string }): boolean {
  return o.status === 504 && o.text.includes('"reason":"ResourceVersionTooLarge"');
}

/** One line per finding, for a failure message or the long run's output. */
export function describeFindings(r: FuzzReport): string[] {
  const brief = (q: FuzzRequest) => `${q.method} ${q.path.slice(0, 120)} [${q.contentType ?? ''}] ${(q.body ?? '').slice(0, 120)}`;
  return [
    ...r.serverErrors.map((e) => `${e.status} for ${brief(e.request)}: ${e.text}`),
    ...r.resets.map((e) => `reset (${e.error}) for ${brief(e.request)}`),
    ...r.hangs.map((e) => `no answer in ${ANSWER_TIMEOUT_MS / 1000} s for ${brief(e.request)}`),
  ];
}
