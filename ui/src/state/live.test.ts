import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Api } from '../api/http';
import type { KubeObject } from '../api/paths';
import { Hub, type LiveCollection, type Source, STREAM_BUDGET } from './live';

/** An API whose lists never answer: the informers just wait, holding their "connection". */
const silentApi: Api = {
  token: 't',
  json: () => new Promise(() => undefined),
  stream: () => new Promise(() => undefined),
};

const source = (resource: Source['resource'], namespace?: string): Source => ({ resource, namespace });

afterEach(() => vi.useRealTimers());

describe('Hub', () => {
  it('shares one watch per source and counts its users', () => {
    const hub = new Hub(silentApi);
    const a = hub.acquire(source('instances'));
    const b = hub.acquire(source('instances'));
    expect(a).toBe(b);
    expect(a.refs).toBe(2);
    expect(hub.connection().watches).toBe(1);
    hub.stopAll();
  });

  it('keeps a released watch for a while, then ends it', () => {
    vi.useFakeTimers();
    const hub = new Hub(silentApi);
    const live = hub.acquire(source('nodes'));
    hub.release(live as LiveCollection<KubeObject>);
    expect(hub.connection().watches).toBe(1);
    expect(hub.acquire(source('nodes'))).toBe(live); // reused while lingering
    hub.release(live as LiveCollection<KubeObject>);
    vi.advanceTimersByTime(60_000);
    expect(hub.connection().watches).toBe(0);
  });

  it('ends the oldest lingering watches to stay within the stream budget, never one in use', () => {
    vi.useFakeTimers();
    const hub = new Hub(silentApi);
    const used = hub.acquire(source('instances'));
    const lingering = ['nodes', 'volumes', 'workitems'].map((r, i) => {
      vi.setSystemTime(1000 * (i + 1));
      const live = hub.acquire(source(r as Source['resource']));
      hub.release(live as LiveCollection<KubeObject>);
      return live;
    });
    expect(hub.connection().watches).toBe(STREAM_BUDGET);
    hub.acquire(source('events', 'demo'));
    expect(hub.connection().watches).toBe(STREAM_BUDGET);
    expect(hub.peek(source('nodes'))).toBeUndefined(); // the oldest lingering one went
    expect(hub.peek(source('volumes'))).toBeDefined();
    hub.makeRoom(2); // a log stream and one more
    expect(hub.peek(source('volumes'))).toBeUndefined();
    expect(hub.peek(source('workitems'))).toBeUndefined();
    expect(hub.peek(source('instances'))).toBeDefined();
    expect(used.refs).toBe(1);
    expect(lingering.every((l) => l.refs === 0)).toBe(true);
    hub.stopAll();
  });

  it('lets views wait for an object to reach a state', async () => {
    const hub = new Hub({ ...silentApi, json: async <T>() => ({ metadata: { resourceVersion: '5' }, items: [{ metadata: { name: 'web', namespace: 'demo', resourceVersion: '5' } }] }) as T });
    const live = hub.acquire<KubeObject>(source('instances'));
    await expect(live.waitFor('demo/web', (o) => o?.metadata.resourceVersion === '5', 'the list')).resolves.toBeUndefined();
    await expect(live.waitFor('demo/web', (o) => o === undefined, 'deletion', 20)).rejects.toThrow('gave up waiting for deletion');
    hub.stopAll();
  });
});
