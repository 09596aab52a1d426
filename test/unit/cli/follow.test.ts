import { expect } from 'chai';
import { ApiStatusError } from '../../../api/client/errors.js';
import { followChanges, nextStep, PrintedVersions, RETRY_DELAY_MS, type ChangeSource } from '../../../cli/client/follow.js';
import type { Interruption } from '../../../cli/client/interrupt.js';

const expired = new ApiStatusError(410, 'Expired', 'too old resource version: 5 (20)');
const expiredEvent: [string, unknown] = ['ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' }];
const modified = (name: string, rv: string): [string, unknown] => ['MODIFIED', { metadata: { name, namespace: 'demo', resourceVersion: rv } }];

describe('nextStep (what follows a watch of get -w)', () => {
  it('watches on from the last version when the server closed the watch', () => {
    expect(nextStep(undefined, 30 * 60_000)).to.deep.equal({ action: 'resume', delayMs: 0 });
  });

  it('re-lists on 410, as an ERROR event or as the HTTP status of the watch request', () => {
    expect(nextStep(expired, 5000)).to.deep.equal({ action: 'relist', delayMs: 0 });
    expect(nextStep(Object.assign(new Error('Gone'), { statusCode: 410 }), 5000)).to.deep.equal({ action: 'relist', delayMs: 0 });
  });

  it('pauses before re-watching when the watch was closed within a second', () => {
    expect(nextStep(undefined, 0)).to.deep.equal({ action: 'resume', delayMs: RETRY_DELAY_MS });
    expect(nextStep(expired, 999)).to.deep.equal({ action: 'relist', delayMs: RETRY_DELAY_MS });
    expect(nextStep(undefined, 1000)).to.deep.equal({ action: 'resume', delayMs: 0 });
  });

  it('gives up on any other failure (a 500, a 403, a network error)', () => {
    for (const error of [new ApiStatusError(500, 'InternalError', 'boom'), new ApiStatusError(403, 'Forbidden', 'no'), new Error('ECONNREFUSED')]) {
      expect(nextStep(error, 5000)).to.deep.equal({ action: 'fail', error });
    }
  });
});

describe('PrintedVersions (what a relist prints)', () => {
  const meta = (name: string, resourceVersion: string) => ({ name, namespace: 'demo', resourceVersion });

  it('prints after a relist only the objects new or changed since printed', () => {
    const printed = new PrintedVersions();
    for (const m of [meta('a', '1'), meta('b', '2'), meta('c', '3')]) printed.record(m);
    printed.record(meta('b', '4'));
    const listed = [meta('a', '1'), meta('b', '4'), meta('c', '7'), meta('d', '8')];
    expect(printed.relisted(listed, (m) => m).map((m) => m.name)).to.deep.equal(['c', 'd']);
    expect(printed.relisted(listed, (m) => m)).to.deep.equal([], 'the listing became what was printed');
  });

  it('forgets deleted objects, so one created again under the same name prints', () => {
    const printed = new PrintedVersions();
    printed.record(meta('a', '1'));
    printed.record(meta('a', '1'), true);
    expect(printed.relisted([meta('a', '1')], (m) => m)).to.have.length(1);
  });

  it('tells objects of different namespaces apart, and prints rows without metadata', () => {
    const printed = new PrintedVersions();
    printed.record({ name: 'a', namespace: 'x', resourceVersion: '1' });
    expect(printed.relisted([{ name: 'a', namespace: 'y', resourceVersion: '1' }], (m) => m)).to.have.length(1);
    expect(printed.relisted([{ cells: [] }], () => undefined)).to.have.length(1);
  });
});

/** One scripted watch: the events it delivers, how long it lasts, and how it ends (undefined = closed cleanly). */
interface Round {
  events?: [string, unknown][];
  lastsMs?: number;
  error?: unknown;
}

/** A ChangeSource playing `rounds`; once they run out, the next watch hangs and the user presses Ctrl-C. */
function scripted(rounds: Round[], relistVersions: string[] = []) {
  let time = 0;
  let interrupt!: (code: number) => void;
  const interruption: Interruption = { done: new Promise((resolve) => (interrupt = resolve)), dispose: () => undefined };
  const log: string[] = [];
  const source: ChangeSource = {
    async watch(rv, onEvent) {
      log.push(`watch from ${rv}`);
      const round = rounds.shift();
      if (!round) {
        setImmediate(() => interrupt(130));
        return { stop: () => undefined, done: new Promise(() => undefined) };
      }
      const done = (async () => {
        await Promise.resolve();
        for (const [type, obj] of round.events ?? []) onEvent(type, obj);
        time += round.lastsMs ?? 0;
        if (round.error) throw round.error;
      })();
      return { stop: () => undefined, done };
    },
    async relist() {
      const rv = relistVersions.shift();
      log.push(`relist → ${rv}`);
      return rv;
    },
  };
  const changes: string[] = [];
  const onChange = (type: string, obj: unknown) => changes.push(`${type} ${(obj as { metadata: { name: string } }).metadata.name}`);
  const sleep = async (ms: number) => {
    log.push(`sleep ${ms}`);
    time += ms;
  };
  return { source, log, changes, onChange, opts: { now: () => time, sleep, interruption }, interrupt };
}

describe('followChanges (get -w)', () => {
  it('after 410 Expired re-lists and watches on from the list\'s version, ignoring events after the ERROR', async () => {
    const s = scripted([{ events: [modified('web', '12'), expiredEvent, modified('late', '13')], lastsMs: 60_000 }, { events: [modified('web', '40')], lastsMs: 5000 }], ['30']);
    const code = await followChanges(s.source, '10', s.onChange, s.opts);
    expect(code).to.equal(130);
    expect(s.log).to.deep.equal(['watch from 10', 'relist → 30', 'watch from 30', 'watch from 40']);
    expect(s.changes).to.deep.equal(['MODIFIED web', 'MODIFIED web']);
  });

  it('re-lists when the watch request itself is answered 410', async () => {
    const s = scripted([{ error: Object.assign(new Error('Gone'), { statusCode: 410 }), lastsMs: 2000 }], ['30']);
    expect(await followChanges(s.source, '10', s.onChange, s.opts)).to.equal(130);
    expect(s.log).to.deep.equal(['watch from 10', 'relist → 30', 'watch from 30']);
  });

  it('pauses a second between watches the server closes at once, and never re-lists for them', async () => {
    const s = scripted([{ events: [modified('web', '11')] }, {}, {}]);
    expect(await followChanges(s.source, '10', s.onChange, s.opts)).to.equal(130);
    expect(s.log).to.deep.equal(['watch from 10', 'sleep 1000', 'watch from 11', 'sleep 1000', 'watch from 11', 'sleep 1000', 'watch from 11']);
  });

  it('pauses between relists when every watch from a fresh list expires at once', async () => {
    const s = scripted([{ events: [expiredEvent] }, { events: [expiredEvent] }], ['20', '30']);
    expect(await followChanges(s.source, '10', s.onChange, s.opts)).to.equal(130);
    expect(s.log).to.deep.equal(['watch from 10', 'sleep 1000', 'relist → 20', 'watch from 20', 'sleep 1000', 'relist → 30', 'watch from 30']);
  });

  it('resumes without a pause after a watch that lasted (the server\'s 30-60 minute timeout)', async () => {
    const s = scripted([{ events: [modified('web', '11'), ['BOOKMARK', { metadata: { resourceVersion: '15' } }]], lastsMs: 30 * 60_000 }]);
    expect(await followChanges(s.source, '10', s.onChange, s.opts)).to.equal(130);
    expect(s.log).to.deep.equal(['watch from 10', 'watch from 15']);
    expect(s.changes).to.deep.equal(['MODIFIED web'], 'bookmarks move the version, they print nothing');
  });

  it('ends with any other failure: an ERROR event that is not 410, or a failed request', async () => {
    const internal: [string, unknown] = ['ERROR', { code: 500, reason: 'InternalError', message: 'boom' }];
    const s = scripted([{ events: [internal], lastsMs: 5000 }]);
    const err = await followChanges(s.source, '10', s.onChange, s.opts).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(ApiStatusError).and.to.include({ code: 500, reason: 'InternalError' });
    const refused = new Error('connect ECONNREFUSED');
    const t = scripted([{ error: refused }]);
    expect(await followChanges(t.source, '10', t.onChange, t.opts).then(() => undefined, (e: unknown) => e)).to.equal(refused);
  });

  it('stops at once when interrupted during the pause', async () => {
    const s = scripted([{}]);
    s.opts.sleep = () => {
      s.interrupt(143);
      return new Promise<void>(() => undefined);
    };
    expect(await followChanges(s.source, '10', s.onChange, s.opts)).to.equal(143);
  });

  it('stops at once when interrupted while a watch is connecting, and stops that watch once it connects', async () => {
    const s = scripted([]);
    let connect!: () => void;
    let stopped = false;
    s.source.watch = () => {
      setImmediate(() => s.interrupt(130));
      return new Promise((resolve) => (connect = () => resolve({ stop: () => (stopped = true), done: new Promise(() => undefined) })));
    };
    expect(await followChanges(s.source, '10', s.onChange, s.opts)).to.equal(130);
    connect();
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).to.equal(true);
  });
});
