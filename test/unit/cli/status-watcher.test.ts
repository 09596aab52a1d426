import { expect } from 'chai';
import type { ClientContext } from '../../../cli/client/context.js';
import type { WatchHandle } from '../../../cli/client/api-client.js';
import type { ApiObject } from '../../../cli/client/watch.js';
import { MAX_RETRY_DELAY_MS, ObjectsWatcher, retryDelay, type ConnectionLost, type ObjectsSource } from '../../../cli/status/snapshot.js';
import { catalog } from './apply-fixtures.js';

const ctx = { catalog: async () => catalog } as unknown as ClientContext;

/** A server that can go down and come back: lists fail while it is down, and its open watches end with the error. */
function scriptedServer() {
  let up = true;
  const open = new Set<(err: Error) => void>();
  const items: Record<string, ApiObject[]> = {};
  const source: ObjectsSource = {
    async list(r) {
      if (!up) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
      return { metadata: { resourceVersion: '1' }, items: items[r.plural] ?? [] };
    },
    async watch(): Promise<WatchHandle> {
      if (!up) throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
      let fail!: (err: Error) => void;
      let end!: () => void;
      const done = new Promise<void>((resolve, reject) => ((end = resolve), (fail = reject)));
      open.add(fail);
      return { stop: () => (open.delete(fail), end()), done };
    },
  };
  return {
    source,
    items,
    down() {
      up = false;
      for (const fail of open) fail(new Error('socket hang up'));
      open.clear();
    },
    up() {
      up = true;
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).to.equal(true, 'the condition came true');
}

describe('ObjectsWatcher connection state (status --watch)', () => {
  it('backs off from 1 s doubling to a few seconds', () => {
    expect([1, 2, 3, 4, 5, 10].map(retryDelay)).to.deep.equal([1000, 2000, 4000, MAX_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS]);
  });

  it('reports the connection lost when the server goes down, keeps retrying with backoff, and reports it back', async () => {
    const server = scriptedServer();
    let time = Date.UTC(2024, 4, 1, 12, 0, 0);
    const delays: number[] = [];
    const reports: (ConnectionLost | undefined)[] = [];
    const changes: string[] = [];
    const watcher = new ObjectsWatcher(ctx, { namespace: 'demo' }, (c) => changes.push(`${c.key} ${c.after?.metadata.name}`), {
      source: server.source,
      now: () => new Date(time),
      sleep: async (ms) => {
        delays.push(ms);
        time += ms;
        await new Promise((resolve) => setImmediate(resolve));
      },
      onConnection: (lost) => reports.push(lost),
    });
    await watcher.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reports).to.deep.equal([], 'nothing to report while the server answers');

    const downAt = time;
    server.down();
    await until(() => delays.includes(MAX_RETRY_DELAY_MS));
    expect(reports[0]).to.deep.equal({ since: new Date(downAt), error: 'socket hang up' });
    expect(reports.every((r) => r?.since.getTime() === downAt)).to.equal(true, 'lost since the first failure, however long it lasts');
    expect(Math.max(...delays)).to.equal(MAX_RETRY_DELAY_MS);
    expect(delays.slice(0, 5)).to.deep.equal([1000, 1000, 1000, 1000, 1000], 'every kind starts at 1 s');

    server.items.instances = [{ metadata: { name: 'web', namespace: 'demo', resourceVersion: '2' } }];
    server.up();
    await until(() => reports.at(-1) === undefined);
    expect(reports.filter((r) => r === undefined)).to.have.length(1, 'back once every kind lists again');
    expect(changes).to.deep.equal(['instances web'], 'the relist brings the objects up to date');
    watcher.stop();
  });
});
