/**
 * Watch delivery latency: many HTTP watch streams on one namespace while a
 * paced writer creates objects; latency = when a watcher's socket delivers
 * the ADDED event − when the create request was sent (one clock: this process).
 */
import https from 'node:https';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { request, type ApiTarget } from './lib.js';

/** Parameters of the watch benchmark. */
export interface WatchBenchOptions {
  namespace: string;
  watchers: number;
  /** Creates per second. */
  rate: number;
  seconds: number;
  /** Builds the body of the i-th object, named `name`. */
  body(name: string): unknown;
  /** How long to wait for stragglers after the last create answered. */
  drainMs: number;
}

/** What the watchers saw. */
export interface WatchBenchResult {
  created: number;
  createErrors: number;
  firstCreateError?: string;
  writeSeconds: number;
  /** Every watcher×event delivery latency (seen − create sent), ms. */
  latencies: Float64Array;
  /** The same deliveries measured from when the create's 201 arrived (isolates fan-out from write queueing; may be < 0). */
  afterAck: Float64Array;
  /** Create request latencies (sent → 201), ms. */
  createLatencies: Float64Array;
  /** Watchers that saw every created object exactly once. */
  completeWatchers: number;
  missing: number;
  duplicates: number;
  /** Streams that ended or failed before the end. */
  brokenStreams: number;
  /** p99 event-loop delay of this (load generator) process during the run, ms. */
  clientLoopDelayP99: number;
}

const NAME_RE = /"name":"(w-\d+)"/;
const TYPE_RE = /"type":"([A-Z]+)"/;

/** Runs the watch benchmark; the namespace must exist and hold no objects named `w-*`. */
export async function watchLatencyBench(t: ApiTarget, o: WatchBenchOptions): Promise<WatchBenchResult> {
  const base = `/apis/cairn.dev/v1alpha1/namespaces/${o.namespace}/instances`;
  const list = await request(t, 'GET', base);
  if (list.status !== 200) throw new Error(`list ${base} → ${list.status}`);
  const rv = (JSON.parse(list.body.toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;

  const total = Math.round(o.rate * o.seconds);
  const sentAt = new Map<string, number>();
  const ackAt = new Map<string, number>();
  const seenAt: Float64Array[] = [];
  const createLatencies = new Float64Array(total);
  const latencies = new Float64Array(total * o.watchers);
  let nLat = 0;
  let duplicates = 0;
  let brokenStreams = 0;
  let finished = false;
  // A separate agent: watch streams hold their sockets for the whole run.
  const watchAgent = new https.Agent({ keepAlive: false, maxSockets: Infinity, ca: t.ca });
  const seen: Set<string>[] = [];
  const reqs: ReturnType<typeof https.request>[] = [];
  let onProgress: () => void = () => undefined;

  const openWatcher = (w: number) =>
    new Promise<void>((resolve, reject) => {
      const got = new Set<string>();
      seen[w] = got;
      const at = (seenAt[w] = new Float64Array(total));
      let partial = '';
      const req = https.request(
        {
          host: t.url.hostname,
          port: t.url.port,
          path: `${base}?watch=true&resourceVersion=${rv}&timeoutSeconds=300`,
          headers: { Authorization: `Bearer ${t.token}`, Accept: 'application/json' },
          agent: watchAgent,
        },
        (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`watch ${w} → ${res.statusCode}`));
            res.resume();
            return;
          }
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const now = performance.now();
            const lines = (partial + chunk).split('\n');
            partial = lines.pop()!;
            for (const line of lines) {
              if (line.length === 0) continue;
              const type = TYPE_RE.exec(line.slice(0, 40))?.[1];
              const name = NAME_RE.exec(line)?.[1];
              if (type !== 'ADDED' || !name) continue;
              if (got.has(name)) {
                duplicates++;
                continue;
              }
              got.add(name);
              at[Number(name.slice(2))] = now;
              const sent = sentAt.get(name);
              if (sent !== undefined) latencies[nLat++] = now - sent;
            }
            if (got.size >= total) onProgress();
          });
          res.on('end', () => {
            if (!finished) brokenStreams++;
          });
          res.on('error', () => undefined);
          resolve();
        },
      );
      req.on('error', (err) => {
        if (!finished) {
          brokenStreams++;
          reject(err);
        }
      });
      req.end();
      reqs.push(req);
    });

  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  try {
    await Promise.all(Array.from({ length: o.watchers }, (_, w) => openWatcher(w)));
    loopDelay.enable();

    // The paced writer: at any moment, floor(elapsed × rate) creates have been sent.
    let createErrors = 0;
    let firstCreateError: string | undefined;
    const inflight: Promise<void>[] = [];
    const create = (i: number) => {
      const name = `w-${i}`;
      const t0 = performance.now();
      sentAt.set(name, t0);
      return request(t, 'POST', base, o.body(name)).then(
        (r) => {
          const now = performance.now();
          ackAt.set(name, now);
          createLatencies[i] = now - t0;
          if (r.status !== 201) {
            createErrors++;
            firstCreateError ??= `${r.status} ${r.body.toString().slice(0, 300)}`;
          }
        },
        (err) => {
          createErrors++;
          firstCreateError ??= String(err);
        },
      );
    };
    const start = performance.now();
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * o.rate));
      while (sent < due) inflight.push(create(sent++));
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all(inflight);
    const writeSeconds = (performance.now() - start) / 1000;

    // Wait until every watcher has everything (or the drain time passes).
    const expected = total - createErrors;
    const allSeen = () => seen.every((s) => s.size >= expected);
    if (!allSeen()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, o.drainMs);
        onProgress = () => {
          if (allSeen()) {
            clearTimeout(timer);
            resolve();
          }
        };
      });
    }
    loopDelay.disable();
    const completeWatchers = seen.filter((s) => s.size === expected).length;
    const afterAck: number[] = [];
    for (const at of seenAt) {
      for (let i = 0; i < total; i++) {
        const ack = ackAt.get(`w-${i}`);
        if (at[i]! > 0 && ack !== undefined) afterAck.push(at[i]! - ack);
      }
    }
    const missing = seen.reduce((sum, s) => sum + Math.max(0, expected - s.size), 0);
    return {
      created: total,
      createErrors,
      firstCreateError,
      writeSeconds,
      latencies: latencies.subarray(0, nLat),
      afterAck: Float64Array.from(afterAck),
      createLatencies,
      completeWatchers,
      missing,
      duplicates,
      brokenStreams,
      clientLoopDelayP99: loopDelay.percentile(99) / 1e6,
    };
  } finally {
    finished = true;
    loopDelay.disable();
    for (const req of reqs) req.destroy();
    watchAgent.destroy();
  }
}
