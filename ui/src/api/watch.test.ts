import { afterEach, describe, expect, it } from 'vitest';
import type { Api } from './http';
import { ApiError } from './http';
import type { KubeObject } from './paths';
import { type ConnectionState, startInformer } from './watch';
import type { WatchEvent } from '../state/store';

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'demo', resourceVersion: rv } });

/** A response body that sends `chunks` and then closes, fails, or stays open. */
function body(chunks: string[], end: 'close' | 'fail' | 'hang'): Response {
  const bytes = new TextEncoder();
  return new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(bytes.encode(c));
        if (end === 'close') controller.close();
        if (end === 'fail') controller.error(new TypeError('network error'));
      },
    }),
  );
}

/** A fake API answering lists and watches from scripts, recording the paths asked for. */
function fakeApi(lists: { rv: string; items: KubeObject[] }[], watches: (() => Response | Promise<Response>)[]): Api & { asked: string[] } {
  const asked: string[] = [];
  return {
    token: 't',
    asked,
    async json<T>(_method: string, path: string): Promise<T> {
      asked.push(path);
      const list = lists.shift();
      if (!list) return new Promise<T>(() => undefined); // no more lists: wait forever
      return { metadata: { resourceVersion: list.rv }, items: list.items } as T;
    },
    async stream(path: string): Promise<Response> {
      asked.push(path);
      const next = watches.shift();
      return next ? next() : new Promise<Response>(() => undefined);
    },
  };
}

function record() {
  const log: string[] = [];
  const states: ConnectionState[] = [];
  return {
    log,
    states,
    handlers: {
      onList: (items: KubeObject[], rv: string) => log.push(`list@${rv}:${items.map((i) => i.metadata.name).join(',')}`),
      onEvents: (events: WatchEvent<KubeObject>[]) => log.push(...events.map((e) => `${e.type}:${e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED' ? e.object.metadata.name : ''}`)),
      onConnection: (s: ConnectionState) => states.push(s),
    },
  };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

let stop: () => void = () => undefined;
afterEach(() => stop());

describe('startInformer', () => {
  it('lists, watches from the list resourceVersion, and relists after 410 Gone', async () => {
    const first = '{"type":"ADDED","object":{"metadata":{"name":"b","namespace":"demo","resourceVersion":"11"}}}\n';
    const api = fakeApi(
      [{ rv: '10', items: [obj('a', '5')] }, { rv: '20', items: [obj('a', '5'), obj('b', '11')] }],
      [() => body([first.slice(0, 30), first.slice(30), '{"type":"ERROR","object":{"code":410,"message":"too old"}}\n'], 'hang')],
    );
    const r = record();
    stop = startInformer(api, { path: '/apis/cairn.dev/v1alpha1/instances', firstRetryMs: 1 }, r.handlers);
    await until(() => r.log.length >= 3);
    expect(r.log.slice(0, 3)).toEqual(['list@10:a', 'ADDED:b', 'list@20:a,b']);
    expect(api.asked[1]).toBe('/apis/cairn.dev/v1alpha1/instances?watch=true&resourceVersion=10&allowWatchBookmarks=true');
    await until(() => api.asked.length >= 4);
    expect(api.asked[3]).toContain('resourceVersion=20');
  });

  it('relists when the watch request itself answers 410', async () => {
    const api = fakeApi([{ rv: '10', items: [] }, { rv: '30', items: [obj('c', '25')] }], [() => Promise.reject(new ApiError(410, 'Expired'))]);
    const r = record();
    stop = startInformer(api, { path: '/x', firstRetryMs: 1 }, r.handlers);
    await until(() => r.log.length >= 2);
    expect(r.log).toEqual(['list@10:', 'list@30:c']);
  });

  it('reports a dropped stream, then relists and watches again', async () => {
    const api = fakeApi([{ rv: '10', items: [obj('a', '5')] }, { rv: '12', items: [] }], [() => body([], 'fail')]);
    const r = record();
    stop = startInformer(api, { path: '/x', firstRetryMs: 1 }, r.handlers);
    await until(() => r.log.length >= 2);
    expect(r.log).toEqual(['list@10:a', 'list@12:']);
    expect(r.states.map((s) => s.state)).toEqual(['connecting', 'live', 'retrying', 'live']);
    expect(r.states[2]).toMatchObject({ error: 'network error' });
  });

  it('tells a refusal from a connection problem', async () => {
    const api = fakeApi([], []);
    api.json = () => Promise.reject(new ApiError(403, 'instances.cairn.dev is forbidden'));
    const r = record();
    stop = startInformer(api, { path: '/x', firstRetryMs: 1 }, r.handlers);
    await until(() => r.states.length >= 2);
    expect(r.states[1]).toEqual({ state: 'refused', error: 'instances.cairn.dev is forbidden', status: 403 });
  });

  it('passes the field selector to the list and the watch', async () => {
    const api = fakeApi([{ rv: '1', items: [] }], []);
    stop = startInformer(api, { path: '/api/v1/namespaces/demo/events', fieldSelector: 'involvedObject.name=web' }, record().handlers);
    await until(() => api.asked.length >= 2);
    expect(api.asked[0]).toBe('/api/v1/namespaces/demo/events?fieldSelector=involvedObject.name%3Dweb');
    expect(api.asked[1]).toContain('fieldSelector=involvedObject.name%3Dweb');
  });
});
