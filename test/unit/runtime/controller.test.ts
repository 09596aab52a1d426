/**
 * Controller (informers → queue → workers → reconcile) on a fake clock with
 * a fake informer and a recording logger: the reconcile-result contract
 * (success forgets, requeueAfterMs, PermanentError not retried, any other
 * throw — a 409 ApiException included — retried with per-key backoff), one
 * reconcile per key at a time across workers, event handlers and resync,
 * stop, and metrics. Also the API error conversion the controller relies on.
 */
import { expect } from 'chai';
import { ApiException } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { ApiStatusError, isConflict, isGone, isNotFound, statusCodeOf, toApiError } from '../../../api/client/errors.js';
import { Controller, PermanentError, type Result } from '../../../runtime/controller.js';
import type { Informer, InformerHandlers, ListedObject } from '../../../runtime/informer.js';
import { RuntimeMetrics } from '../../../runtime/metrics.js';
import { FakeClock, flushMicrotasks } from '../../support/fake-clock.js';

interface LogLine {
  level: string;
  message: string;
  meta: Record<string, unknown>;
}

function recordingLogger(lines: LogLine[]): Logger {
  const at = (level: string) => (message: string, meta: Record<string, unknown> = {}) => void lines.push({ level, message, meta });
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } as unknown as Logger;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A Controller on a fake clock whose reconcile records every call. */
function harness(reconcile: (key: string, n: number) => Promise<Result | void>, extra: { workers?: number; resyncMs?: number; metrics?: RuntimeMetrics } = {}) {
  const clock = new FakeClock(0);
  const logs: LogLine[] = [];
  const calls: Array<{ key: string; at: number }> = [];
  const active = new Set<string>();
  const overlaps: string[] = [];
  const controller = new Controller({
    name: 'test',
    log: recordingLogger(logs),
    clock,
    ...extra,
    reconcile: async (key) => {
      if (active.has(key)) overlaps.push(key);
      active.add(key);
      calls.push({ key, at: clock.now() });
      try {
        return await reconcile(key, calls.filter((c) => c.key === key).length);
      } finally {
        active.delete(key);
      }
    },
  });
  const running = controller.run();
  const callsOf = (key: string) => calls.filter((c) => c.key === key).map((c) => c.at);
  return { clock, logs, calls, callsOf, active, overlaps, controller, running };
}

class FakeInformer<T extends ListedObject> {
  readonly handlers: InformerHandlers<T>[] = [];
  objects: T[] = [];
  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
  }
  list(): T[] {
    return this.objects;
  }
  asInformer(): Informer<T> {
    return this as unknown as Informer<T>;
  }
}

const conflict = () =>
  new ApiException(409, 'Conflict', { kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409, message: 'the object has been modified; please apply your changes to the latest version and try again' }, {});

describe('Controller', () => {
  const stops: Array<() => void> = [];
  afterEach(() => stops.splice(0).forEach((s) => s()));
  const start = (...args: Parameters<typeof harness>) => {
    const h = harness(...args);
    stops.push(() => h.controller.stop());
    return h;
  };

  it('reconciles an added key once; success leaves no retry scheduled', async () => {
    const h = start(async () => undefined);
    h.controller.queue.add('ns/a');
    await flushMicrotasks();
    expect(h.callsOf('ns/a')).to.deep.equal([0]);
    await h.clock.advanceAsync(2_000_000);
    expect(h.callsOf('ns/a')).to.deep.equal([0]);
    expect(h.clock.pendingTimers).to.equal(0);
    expect(h.controller.queue.retries('ns/a')).to.equal(0);
  });

  it('requeueAfterMs re-reconciles the key after exactly that delay, and only then', async () => {
    const h = start(async (_k, n) => (n === 1 ? { requeueAfterMs: 30_000 } : undefined));
    h.controller.queue.add('ns/a');
    await flushMicrotasks();
    await h.clock.advanceAsync(29_999);
    expect(h.callsOf('ns/a')).to.deep.equal([0]);
    await h.clock.advanceAsync(1);
    expect(h.callsOf('ns/a')).to.deep.equal([0, 30_000]);
    await h.clock.advanceAsync(1_000_000);
    expect(h.callsOf('ns/a')).to.have.length(2);
  });

  it('requeueAfterMs forgets earlier failures: the next error backs off from 5 ms again', async () => {
    const h = start(async (_k, n) => {
      if (n === 1 || n === 2) throw new Error('transient');
      if (n === 3) return { requeueAfterMs: 1000 };
      if (n === 4) throw new Error('transient again');
    });
    h.controller.queue.add('ns/a');
    await h.clock.advanceAsync(5000);
    // errors at 0 and 5 (backoff 5, 10) → requeue at 15 → 1000 later → error → 5 ms, not 20 ms
    expect(h.callsOf('ns/a')).to.deep.equal([0, 5, 15, 1015, 1020]);
    expect(h.controller.queue.retries('ns/a')).to.equal(0);
  });

  it('requeueAfterMs 0 re-reconciles at once, after the current reconcile is done', async () => {
    const h = start(async (_k, n) => (n < 3 ? { requeueAfterMs: 0 } : undefined));
    h.controller.queue.add('ns/a');
    await h.clock.advanceAsync(10);
    expect(h.callsOf('ns/a')).to.deep.equal([0, 0, 0]);
    expect(h.overlaps).to.deep.equal([]);
  });

  it('a PermanentError is not retried, its backoff is forgotten, and it is logged as a warning with the key', async () => {
    const h = start(async () => {
      throw new PermanentError('spec.cpus: must be positive');
    });
    h.controller.queue.add('ns/bad');
    await h.clock.advanceAsync(2_000_000);
    expect(h.callsOf('ns/bad')).to.deep.equal([0]);
    expect(h.clock.pendingTimers).to.equal(0);
    expect(h.controller.queue.retries('ns/bad')).to.equal(0);
    const warn = h.logs.find((l) => l.level === 'warn');
    expect(warn?.meta).to.include({ controller: 'test', key: 'ns/bad', error: 'spec.cpus: must be positive' });
  });

  it('a PermanentError keeps its name and cause', () => {
    const cause = new Error('root');
    const e = new PermanentError('bad spec', { cause });
    expect(e).to.be.instanceOf(Error);
    expect([e.name, e.message, e.cause]).to.deep.equal(['PermanentError', 'bad spec', cause]);
  });

  it('a 409 Conflict (client-node ApiException) is retried with exponential backoff 5, 10, 20 ms until it succeeds', async () => {
    const h = start(async (_k, n) => {
      if (n <= 3) throw conflict();
    });
    h.controller.queue.add('ns/a');
    await flushMicrotasks();
    await h.clock.advanceAsync(4);
    expect(h.callsOf('ns/a'), 'not retried before its 5 ms backoff').to.deep.equal([0]);
    await h.clock.advanceAsync(10_000);
    expect(h.callsOf('ns/a')).to.deep.equal([0, 5, 15, 35]);
    expect(h.controller.queue.retries('ns/a'), 'success forgets the failures').to.equal(0);
    const retries = h.logs.filter((l) => l.message === 'reconcile failed, will retry');
    expect(retries.map((l) => l.meta.retries)).to.deep.equal([1, 2, 3]);
    expect(retries[0]!.meta.error).to.match(/has been modified/);
  });

  it('any other throw (plain Error, bare {code: 409} object, string) is retried too, never swallowed', async () => {
    const throwers: Record<string, () => never> = {
      'ns/error': () => {
        throw new Error('boom');
      },
      'ns/object': () => {
        throw { code: 409, body: '{"reason":"Conflict","message":"stale"}' };
      },
      'ns/string': () => {
        throw 'weird';
      },
    };
    const h = start(async (key, n) => {
      if (n <= 2) throwers[key]!();
    });
    for (const k of Object.keys(throwers)) h.controller.queue.add(k);
    await h.clock.advanceAsync(1000);
    for (const k of Object.keys(throwers)) expect(h.callsOf(k), k).to.deep.equal([0, 5, 15]);
    expect(h.logs.filter((l) => l.level === 'info').map((l) => l.meta.error)).to.include.members(['boom', 'stale', 'weird']);
  });

  it('one key is never reconciled by two workers at once; re-added keys run once more after, other keys in parallel', async () => {
    const gate = deferred();
    const h = start(
      async (key, n) => {
        if (key === 'ns/a' && n === 1) await gate.promise;
      },
      { workers: 3 },
    );
    h.controller.queue.add('ns/a');
    await flushMicrotasks();
    expect([...h.active]).to.deep.equal(['ns/a']);
    h.controller.queue.add('ns/a');
    h.controller.queue.add('ns/a');
    h.controller.queue.add('ns/b');
    await flushMicrotasks();
    expect(h.callsOf('ns/b'), 'b is not held up behind a').to.deep.equal([0]);
    expect(h.callsOf('ns/a')).to.have.length(1);
    gate.resolve();
    await flushMicrotasks();
    await h.clock.advanceAsync(100);
    expect(h.callsOf('ns/a')).to.have.length(2);
    expect(h.overlaps).to.deep.equal([]);
  });

  it('a reconcile that does not return is logged with its key after 30 s, and again every 30 s until it does', async () => {
    const hang = deferred();
    const h = start(() => hang.promise);
    h.controller.queue.add('ns/stuck');
    await flushMicrotasks();
    await h.clock.advanceAsync(29_999);
    expect(h.logs.filter((l) => l.level === 'warn')).to.deep.equal([]);
    await h.clock.advanceAsync(30_001);
    const warnings = () => h.logs.filter((l) => l.message.startsWith('reconcile still running')).map((l) => [l.meta.key, l.meta.seconds, l.meta.controller]);
    expect(warnings()).to.deep.equal([['ns/stuck', 30, 'test'], ['ns/stuck', 60, 'test']]);
    hang.resolve();
    await flushMicrotasks();
    await h.clock.advanceAsync(120_000);
    expect(warnings(), 'none once it returned').to.have.length(2);
  });

  it('caches that have not synced after 30 s are logged by resource, and no worker starts meanwhile', async () => {
    const clock = new FakeClock(0);
    const logs: LogLine[] = [];
    const synced = deferred();
    let hasSynced = false;
    const informer = { ...new FakeInformer(), source: { plural: 'leases' }, get hasSynced() { return hasSynced; }, waitForSync: () => synced.promise, addHandlers: () => undefined };
    const reconciled: string[] = [];
    const controller = new Controller({ name: 'nodes', log: recordingLogger(logs), clock, reconcile: async (key) => void reconciled.push(key) });
    controller.watch(informer as unknown as Informer<ListedObject>, () => []);
    const running = controller.run();
    controller.queue.add('ns/n1');
    await clock.advanceAsync(30_000);
    expect(reconciled).to.deep.equal([]);
    expect(logs.map((l) => [l.message, l.meta.resources, l.meta.controller])).to.deep.equal([['caches not synced yet; no reconcile runs until they are', ['leases'], 'nodes']]);
    hasSynced = true;
    synced.resolve();
    await flushMicrotasks();
    await clock.advanceAsync(60_000);
    expect(logs, 'none once synced').to.have.length(1);
    expect(reconciled).to.deep.equal(['ns/n1']);
    controller.stop();
    await running;
  });

  it('stop() before the caches sync: run() resolves, reconciles nothing, and leaves no timer behind', async () => {
    const clock = new FakeClock(0);
    const informer = { ...new FakeInformer(), source: { plural: 'secrets' }, hasSynced: false, waitForSync: () => new Promise<void>(() => undefined), addHandlers: () => undefined };
    const reconciled: string[] = [];
    const controller = new Controller({ name: 'gc', log: recordingLogger([]), clock, resyncMs: 1000, reconcile: async (key) => void reconciled.push(key) });
    controller.watch(informer as unknown as Informer<ListedObject>, () => []);
    const running = controller.run();
    controller.queue.add('all');
    await clock.advanceAsync(5000);
    controller.stop();
    await running;
    expect(reconciled).to.deep.equal([]);
    expect(clock.pendingTimers, 'timers left running').to.equal(0);
  });

  it('watch(): add, update (old and new keys) and delete of an informer enqueue the keys the mapper returns', async () => {
    type Obj = { metadata: { name: string; namespace: string }; owner: string };
    const informer = new FakeInformer<Obj>();
    const h = start(async () => undefined);
    h.controller.watch(informer.asInformer(), (o) => [`${o.metadata.namespace}/${o.owner}`]);
    const obj = (owner: string): Obj => ({ metadata: { name: 'child', namespace: 'ns' }, owner });
    informer.handlers[0]!.add!(obj('p1'));
    await flushMicrotasks();
    informer.handlers[0]!.update!(obj('p1'), obj('p2'));
    await flushMicrotasks();
    informer.handlers[0]!.delete!(obj('p3'));
    await flushMicrotasks();
    expect(h.calls.map((c) => c.key)).to.deep.equal(['ns/p1', 'ns/p1', 'ns/p2', 'ns/p3']);
  });

  it('watch(): deletedKeys adds keys on a delete only (an unplaced instance woken by freed capacity, whatever the deleted object carries)', async () => {
    type Obj = { metadata: { name: string; namespace: string }; owner: string };
    const informer = new FakeInformer<Obj>();
    const h = start(async () => undefined);
    h.controller.watch(informer.asInformer(), (o) => [`${o.metadata.namespace}/${o.owner}`], 0, { deletedKeys: () => ['ns/waiting'] });
    const obj = (owner: string): Obj => ({ metadata: { name: 'child', namespace: 'ns' }, owner });
    informer.handlers[0]!.add!(obj('p1'));
    await flushMicrotasks();
    informer.handlers[0]!.delete!(obj('p1'));
    await flushMicrotasks();
    expect(h.calls.map((c) => c.key)).to.deep.equal(['ns/p1', 'ns/p1', 'ns/waiting']);
  });

  it('watch(): updatesOnly enqueues the updates its filter passes, and neither adds nor deletes (another watch has those)', async () => {
    type Obj = { metadata: { name: string; namespace: string }; owner: string };
    const informer = new FakeInformer<Obj>();
    const h = start(async () => undefined);
    h.controller.watch(informer.asInformer(), (o) => [`${o.metadata.namespace}/${o.owner}`], 0, { updatesOnly: true, changed: (_old, now) => now.owner !== 'quiet' });
    const obj = (owner: string): Obj => ({ metadata: { name: 'child', namespace: 'ns' }, owner });
    informer.handlers[0]!.add?.(obj('p1'));
    informer.handlers[0]!.update!(obj('p1'), obj('quiet'));
    informer.handlers[0]!.delete?.(obj('p1'));
    await flushMicrotasks();
    expect(h.calls).to.deep.equal([]);
    informer.handlers[0]!.update!(obj('p1'), obj('p2'));
    await flushMicrotasks();
    expect(h.calls.map((c) => c.key)).to.deep.equal(['ns/p1', 'ns/p2']);
  });

  it('resyncMs re-enqueues every cached object of the watched informers periodically, until stop', async () => {
    type Obj = { metadata: { name: string; namespace: string } };
    const informer = new FakeInformer<Obj>();
    informer.objects = [{ metadata: { name: 'x', namespace: 'ns' } }, { metadata: { name: 'y', namespace: 'ns' } }];
    const h = start(async () => undefined, { resyncMs: 60_000 });
    h.controller.watch(informer.asInformer(), (o) => [`${o.metadata.namespace}/${o.metadata.name}`]);
    await h.clock.advanceAsync(59_999);
    expect(h.calls).to.deep.equal([]);
    await h.clock.advanceAsync(1);
    await h.clock.advanceAsync(60_000);
    expect(h.calls).to.deep.equal([
      { key: 'ns/x', at: 60_000 },
      { key: 'ns/y', at: 60_000 },
      { key: 'ns/x', at: 120_000 },
      { key: 'ns/y', at: 120_000 },
    ]);
    h.controller.stop();
    expect(h.clock.pendingTimers).to.equal(0);
  });

  it('stop(): the in-flight reconcile finishes, run() resolves after it, and queued or delayed keys are not reconciled', async () => {
    const gate = deferred();
    const h = start(
      async (key) => {
        if (key === 'ns/a') await gate.promise;
      },
      { workers: 1 },
    );
    h.controller.queue.add('ns/a');
    await flushMicrotasks();
    h.controller.queue.add('ns/b');
    h.controller.queue.addAfter('ns/c', 10);
    let finished = false;
    void h.running.then(() => (finished = true));
    h.controller.stop();
    await flushMicrotasks();
    expect(finished, 'a is still being reconciled').to.equal(false);
    gate.resolve();
    await h.clock.advanceAsync(1000);
    expect(finished).to.equal(true);
    expect(h.calls.map((c) => c.key)).to.deep.equal(['ns/a']);
  });

  it('run() with no keys resolves on stop()', async () => {
    const h = start(async () => undefined, { workers: 4 });
    h.controller.stop();
    await h.running;
  });

  it('counts reconciles by result and reports its queue under the controller’s name', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const h = start(
      async (key, n) => {
        if (key === 'ns/ok') return;
        if (key === 'ns/later') return n === 1 ? { requeueAfterMs: 10 } : undefined;
        if (key === 'ns/perm') throw new PermanentError('no');
        if (n === 1) throw conflict();
      },
      { metrics },
    );
    for (const k of ['ns/ok', 'ns/later', 'ns/perm', 'ns/flaky']) h.controller.queue.add(k);
    await h.clock.advanceAsync(100);
    const counts = Object.fromEntries(
      (await metrics.registry.getSingleMetric('cairn_reconcile_total')!.get()).values.map((v) => [String(v.labels.result), v.value]),
    );
    expect(counts).to.deep.equal({ success: 3, requeue: 1, permanent: 1, error: 1 });
    const text = await metrics.registry.metrics();
    expect(text).to.match(/cairn_workqueue_adds_total\{name="test"\} 6/);
    expect(text).to.match(/cairn_workqueue_retries_total\{name="test"\} 1/);
    expect(text).to.match(/cairn_reconcile_duration_seconds_count\{controller="test"\} 6/);
  });
});

describe('API errors (api/client/errors.ts)', () => {
  it('turns a client-node ApiException with a Status body into an ApiStatusError with code, reason, message and cause', () => {
    const ex = conflict();
    const e = toApiError(ex);
    expect(e).to.be.instanceOf(ApiStatusError);
    const api = e as ApiStatusError;
    expect([api.code, api.reason, api.message, api.cause]).to.deep.equal([409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again', ex]);
    expect(toApiError(api), 'idempotent').to.equal(api);
  });

  it('parses a Status body sent as text, and falls back to the text or the error message', () => {
    const fromJson = toApiError(new ApiException(404, 'Not Found', '{"reason":"NotFound","message":"instances \\"x\\" not found"}', {})) as ApiStatusError;
    expect([fromJson.code, fromJson.reason, fromJson.message]).to.deep.equal([404, 'NotFound', 'instances "x" not found']);
    const fromText = toApiError(new ApiException(502, 'Bad Gateway', 'upstream down', {})) as ApiStatusError;
    expect([fromText.code, fromText.reason, fromText.message]).to.deep.equal([502, '502', 'upstream down']);
    const watchError = Object.assign(new Error('Gone'), { statusCode: 410 });
    expect([isGone(watchError), statusCodeOf(watchError)]).to.deep.equal([true, 410]);
  });

  it('leaves errors without an HTTP code alone (network errors carry string codes)', () => {
    const net = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(toApiError(net)).to.equal(net);
    expect(toApiError(undefined)).to.equal(undefined);
    expect([statusCodeOf(net), isNotFound(net), isConflict(net)]).to.deep.equal([undefined, false, false]);
  });

  it('classifies 404, 409 and 410', () => {
    const withCode = (code: number) => new ApiException(code, '', {}, {});
    expect([404, 409, 410, 500].map((c) => [isNotFound(withCode(c)), isConflict(withCode(c)), isGone(withCode(c))])).to.deep.equal([
      [true, false, false],
      [false, true, false],
      [false, false, true],
      [false, false, false],
    ]);
  });
});
