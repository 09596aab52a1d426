/**
 * Which updates wake the garbage collector: only those that can change a
 * step (owners, deletion, finalizers). Lease renewals and status writes,
 * every second across a cluster, do not. And how a run ends: a step that
 * lost a race asks to run again soon; one the API failed fails the run, so
 * that the work queue backs off instead of trying every second for good.
 */
import { expect } from 'chai';
import type { Logger } from 'winston';
import { ApiStatusError } from '../../../../api/client/errors.js';
import type { RestClient } from '../../../../api/client/rest-client.js';
import { changedForCollection, GarbageCollector } from '../../../../controller/garbage-collector/collector.js';
import type { Informer, ListedObject } from '../../../../runtime/informer.js';

const lease = (rv: string, extra: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) =>
  ({ metadata: { name: 'node-n1', namespace: 'a', uid: 'u1', resourceVersion: rv, ...extra }, spec: { holderIdentity: 'n1', renewTime: `2026-11-26T00:00:0${rv}Z`, ...spec } }) as unknown as ListedObject;

describe('garbage collector wake-ups', () => {
  it('a renewal or any other change of spec or status is no reason to plan again', () => {
    expect(changedForCollection(lease('1'), lease('2'))).to.equal(false);
    expect(changedForCollection(lease('1'), lease('2', {}, { holderIdentity: 'n2' }))).to.equal(false);
  });

  it('a change of owners, of deletion or of finalizers is', () => {
    const owners = { ownerReferences: [{ apiVersion: 'cairn.dev/v1alpha1', kind: 'Node', name: 'n1', uid: 'n' }] };
    expect(changedForCollection(lease('1'), lease('2', owners))).to.equal(true);
    expect(changedForCollection(lease('1', owners), lease('2'))).to.equal(true);
    expect(changedForCollection(lease('1'), lease('2', { deletionTimestamp: '2026-11-26T00:00:09Z' }))).to.equal(true);
    expect(changedForCollection(lease('1'), lease('2', { finalizers: ['foregroundDeletion'] }))).to.equal(true);
  });
});

describe('garbage collector runs', () => {
  const CONFIG_MAP = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
  const INSTANCE = { group: 'cairn.dev', version: 'v1alpha1', kind: 'Instance', plural: 'instances', namespaced: true };
  const orphan = { metadata: { name: 'cm', namespace: 'a', uid: 'c1', resourceVersion: '5', ownerReferences: [{ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name: 'gone', uid: 'i1' }] } } as unknown as ListedObject;

  /** An informer holding `objects`, indexed as the collector asks. */
  function informer(objects: ListedObject[]): Informer<ListedObject> {
    const indexes = new Map<string, (o: ListedObject) => string[]>();
    return {
      addIndex: (name: string, fn: (o: ListedObject) => string[]) => void indexes.set(name, fn),
      byIndex: (name: string, value: string) => objects.filter((o) => indexes.get(name)!(o).includes(value)),
      countByIndex: (name: string, value: string) => objects.filter((o) => indexes.get(name)!(o).includes(value)).length,
    } as unknown as Informer<ListedObject>;
  }
  /** A collector whose orphan's owner reads 404 and whose delete answers `deleteCode`. */
  function collector(deleteCode: number): GarbageCollector {
    const rest = {
      request: (method: string) => Promise.reject(new ApiStatusError(method === 'GET' ? 404 : deleteCode, 'Test', `answered ${method === 'GET' ? 404 : deleteCode}`)),
    } as unknown as RestClient;
    const log = { info: () => undefined, warn: () => undefined } as unknown as Logger;
    return new GarbageCollector([{ kind: CONFIG_MAP, informer: informer([orphan]) }, { kind: INSTANCE, informer: informer([]) }], rest, log);
  }

  it('deletes only the version it planned on: the uid and the resourceVersion are preconditions', async () => {
    const sent: unknown[] = [];
    const rest = {
      request: (method: string, _path: string, o?: { body?: unknown }) => (method === 'GET' ? Promise.reject(new ApiStatusError(404, 'NotFound', 'gone')) : (sent.push(o?.body), Promise.resolve({}))),
    } as unknown as RestClient;
    const log = { info: () => undefined, warn: () => undefined } as unknown as Logger;
    await new GarbageCollector([{ kind: CONFIG_MAP, informer: informer([orphan]) }, { kind: INSTANCE, informer: informer([]) }], rest, log).collect();
    expect(sent).to.deep.equal([{ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: 'c1', resourceVersion: '5' } }]);
  });

  it('asks to run again soon when a step lost a race (409)', async () => {
    expect(await collector(409).collect()).to.deep.equal({ requeueAfterMs: 1000 });
  });

  it('fails the run, naming the step, when the API failed one (so the queue backs off)', async () => {
    const err = await collector(503).collect().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('1 garbage collection step(s) failed, the first: deleteOrphaned configmaps a/cm: answered 503');
  });
});
