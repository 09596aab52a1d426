import { expect } from 'chai';
import fc from 'fast-check';
import { serverSideApply, type ManagedFieldsEntry } from '../../../../apiserver/rest/apply.js';
import { ownedPaths, pathsOf, toFieldsV1 } from '../../../../apiserver/rest/field-paths.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { catchApiError } from '../helpers.js';
import { ApiError as ApiErrorLike } from '../../../../apiserver/errors.js';

const API_VERSION = 'cairn.dev/v1alpha1';
const T1 = '2025-01-01T00:00:00Z';
const T2 = '2025-01-01T00:01:00Z';

/** What the store hands serverSideApply when the object does not exist yet. */
function shell(): KubeObject {
  return { apiVersion: API_VERSION, kind: 'Instance', metadata: { name: 'web', namespace: 'default' } };
}

/** An apply configuration; `spec` undefined leaves it out entirely. */
function config(spec: Record<string, unknown> | undefined, metadata: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: API_VERSION, kind: 'Instance', metadata: { name: 'web', ...metadata }, ...(spec ? { spec } : {}) };
}

function managed(obj: KubeObject): ManagedFieldsEntry[] {
  return (obj.metadata.managedFields ?? []) as unknown as ManagedFieldsEntry[];
}

function entryOf(obj: KubeObject, manager: string): ManagedFieldsEntry | undefined {
  return managed(obj).find((e) => e.manager === manager);
}

/** Leaf paths as sorted dotted strings, for order-insensitive comparison. */
function dotted(paths: string[][]): string[] {
  return paths.map((p) => p.join('.')).sort();
}

/** Like `dotted`, but unambiguous when keys contain dots. */
function canonical(paths: string[][]): string[] {
  return paths.map((p) => JSON.stringify(p)).sort();
}

describe('serverSideApply', () => {
  it('creates from an empty shell and records the manager\'s fields', () => {
    const out = serverSideApply(shell(), config({ cpus: 2, memory: '1Gi' }, { labels: { app: 'web' } }), 'alice', false, T1);
    expect(out.spec).to.deep.equal({ cpus: 2, memory: '1Gi' });
    expect(out.metadata.labels).to.deep.equal({ app: 'web' });
    expect(out.metadata.namespace).to.equal('default');
    expect(managed(out)).to.deep.equal([
      {
        manager: 'alice',
        operation: 'Apply',
        apiVersion: API_VERSION,
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:cpus': {}, 'f:memory': {} } },
      },
    ]);
  });

  it('does not record server-owned metadata, apiVersion, kind or status as owned', () => {
    const cfg: KubeObject = {
      ...config({ cpus: 1 }, { uid: 'u', resourceVersion: '5', generation: 3, creationTimestamp: T1, managedFields: [] }),
      status: { phase: 'Running' },
    };
    expect(dotted(ownedPaths(cfg))).to.deep.equal(['spec.cpus']);
  });

  it('does not mutate the live object or the configuration', () => {
    const live = serverSideApply(shell(), config({ cpus: 2, memory: '1Gi' }), 'alice', false, T1);
    const cfg = config({ cpus: 3 });
    const [liveBefore, cfgBefore] = [structuredClone(live), structuredClone(cfg)];
    serverSideApply(live, cfg, 'alice', false, T2);
    expect(live).to.deep.equal(liveBefore);
    expect(cfg).to.deep.equal(cfgBefore);
  });

  it('prunes a field the same manager stopped sending', () => {
    const first = serverSideApply(shell(), config({ cpus: 2, memory: '1Gi' }, { labels: { app: 'web', tier: 'x' } }), 'alice', false, T1);
    const second = serverSideApply(first, config({ cpus: 2 }, { labels: { app: 'web' } }), 'alice', false, T2);
    expect(second.spec).to.deep.equal({ cpus: 2 });
    expect(second.metadata.labels).to.deep.equal({ app: 'web' });
    expect(managed(second)).to.have.length(1);
    expect(entryOf(second, 'alice')!.time).to.equal(T2);
    expect(dotted(pathsOf(entryOf(second, 'alice')!.fieldsV1))).to.deep.equal(['metadata.labels.app', 'spec.cpus']);
  });

  it('leaves fields it never applied alone (status, fields set by plain updates)', () => {
    const live: KubeObject = { ...serverSideApply(shell(), config({ cpus: 2 }), 'alice', false, T1), status: { phase: 'Running' } };
    live.spec.memory = '1Gi'; // as if written by a PUT, which records no Apply ownership
    const out = serverSideApply(live, config({ cpus: 4 }), 'alice', false, T2);
    expect(out.spec).to.deep.equal({ cpus: 4, memory: '1Gi' });
    expect(out.status).to.deep.equal({ phase: 'Running' });
  });

  it('is idempotent for the same configuration, keeping the entry\'s time (so the store writes nothing)', () => {
    const cfg = config({ cpus: 2, process: { command: ['/bin/sleep', '1'] } }, { annotations: { a: 'b' } });
    const once = serverSideApply(shell(), cfg, 'alice', false, T1);
    const twice = serverSideApply(once, cfg, 'alice', false, T2);
    expect(twice).to.deep.equal(once);
    expect(managed(twice)[0]!.time).to.equal(T1);
  });

  it('stamps a new time when the configuration changes a value or what the manager owns', () => {
    const once = serverSideApply(shell(), config({ cpus: 2, memory: '1Gi' }), 'alice', false, T1);
    expect(managed(serverSideApply(once, config({ cpus: 3, memory: '1Gi' }), 'alice', false, T2))[0]!.time).to.equal(T2);
    expect(managed(serverSideApply(once, config({ cpus: 2 }), 'alice', false, T2))[0]!.time).to.equal(T2);
  });

  describe('with two appliers', () => {
    const aliceOwnsCpus = () => serverSideApply(shell(), config({ cpus: 2, memory: '1Gi' }), 'alice', false, T1);

    it('refuses to change a field another applier owns with 409 and FieldManagerConflict causes', () => {
      const err = catchApiError(() => serverSideApply(aliceOwnsCpus(), config({ cpus: 4 }), 'bob', false, T2));
      expect(err.code).to.equal(409);
      expect(err.reason).to.equal('Conflict');
      expect(err.message).to.equal('Apply failed with 1 conflict: conflict with "alice": .spec.cpus');
      expect(err.details?.causes).to.deep.equal([{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.cpus' }]);
    });

    it('reports every conflicting field', () => {
      const err = catchApiError(() => serverSideApply(aliceOwnsCpus(), config({ cpus: 4, memory: '2Gi' }), 'bob', false, T2));
      expect(err.message).to.match(/^Apply failed with 2 conflicts:/);
      expect(err.details?.causes?.map((c) => c.field)).to.have.members(['.spec.cpus', '.spec.memory']);
    });

    it('with force, takes ownership of the conflicting field and leaves the other applier the rest', () => {
      const out = serverSideApply(aliceOwnsCpus(), config({ cpus: 4 }), 'bob', true, T2);
      expect(out.spec).to.deep.equal({ cpus: 4, memory: '1Gi' });
      expect(dotted(pathsOf(entryOf(out, 'alice')!.fieldsV1))).to.deep.equal(['spec.memory']);
      expect(dotted(pathsOf(entryOf(out, 'bob')!.fieldsV1))).to.deep.equal(['spec.cpus']);
      // alice now conflicts with bob in turn
      const err = catchApiError(() => serverSideApply(out, config({ cpus: 2, memory: '1Gi' }), 'alice', false, T2));
      expect(err.details?.causes?.[0]?.message).to.equal('conflict with "bob"');
    });

    it('drops the other applier\'s entry when force takes all of its fields', () => {
      const live = serverSideApply(shell(), config({ cpus: 2 }), 'alice', false, T1);
      const out = serverSideApply(live, config({ cpus: 4 }), 'bob', true, T2);
      expect(managed(out).map((e) => e.manager)).to.deep.equal(['bob']);
    });

    it('shares a field both send with the same value, and keeps it when one of them stops sending it', () => {
      const shared = serverSideApply(aliceOwnsCpus(), config({ cpus: 2 }), 'bob', false, T2);
      expect(managed(shared).map((e) => e.manager)).to.deep.equal(['alice', 'bob']);
      const aliceDropsCpus = serverSideApply(shared, config({ memory: '1Gi' }), 'alice', false, T2);
      expect(aliceDropsCpus.spec).to.deep.equal({ cpus: 2, memory: '1Gi' });
      const bobDropsCpusToo = serverSideApply(aliceDropsCpus, config(undefined), 'bob', false, T2);
      expect(bobDropsCpusToo.spec).to.deep.equal({ memory: '1Gi' });
    });

    it('does not conflict on fields the other applier does not own', () => {
      const out = serverSideApply(aliceOwnsCpus(), config({ restartPolicy: 'Never' }, { labels: { team: 'b' } }), 'bob', false, T2);
      expect(out.spec).to.deep.equal({ cpus: 2, memory: '1Gi', restartPolicy: 'Never' });
    });

    // Regression (was a bug): apiserver/rest/apply.ts findConflicts treats an empty object in the configuration
    // (`spec: {}`, `metadata.annotations: {}`) as owning everything below it and compares the other
    // manager's leaf (live spec.cpus = 2) with the configuration's value there (undefined), so it
    // throws 409 "conflict with \"alice\": .spec.cpus" although merging `{}` changes nothing. kube's
    // structured-merge-diff only reports fields the apply would modify, and apply.ts's own header
    // says it refuses "to change a field another applier owns". Expected: no conflict, spec unchanged.
    it('does not conflict when the configuration holds an empty object above another applier\'s field', () => {
      const out = serverSideApply(aliceOwnsCpus(), config({}), 'bob', false, T2);
      expect(out.spec).to.deep.equal({ cpus: 2, memory: '1Gi' });
    });

    it('treats a list as one atomic value', () => {
      const live = serverSideApply(shell(), config({ process: { command: ['/bin/a'] } }), 'alice', false, T1);
      expect(dotted(pathsOf(entryOf(live, 'alice')!.fieldsV1))).to.deep.equal(['spec.process.command']);
      const err = catchApiError(() => serverSideApply(live, config({ process: { command: ['/bin/a', '-v'] } }), 'bob', false, T2));
      expect(err.details?.causes?.[0]?.field).to.equal('.spec.process.command');
    });
  });
});

describe('ownedPaths / toFieldsV1 / pathsOf', () => {
  it('encodes leaf paths as FieldsV1 and back', () => {
    const paths = [['spec', 'cpus'], ['spec', 'placement', 'nodeName'], ['metadata', 'labels', 'cairn.dev/role']];
    const fields = toFieldsV1(paths);
    expect(fields).to.deep.equal({
      'f:spec': { 'f:cpus': {}, 'f:placement': { 'f:nodeName': {} } },
      'f:metadata': { 'f:labels': { 'f:cairn.dev/role': {} } },
    });
    expect(dotted(pathsOf(fields))).to.deep.equal(dotted(paths));
  });

  it('counts a list as a single leaf and an empty object as nothing', () => {
    expect(dotted(ownedPaths(config({ placement: {}, volumes: [{ name: 'a' }] })))).to.deep.equal(['spec.volumes']);
  });

  it('reads fields and associative-list items ("k:") from FieldsV1, and ignores the rest (".", "v:")', () => {
    const fields = { 'f:spec': { '.': {}, 'f:cpus': {}, 'f:volumes': { 'k:{"name":"a"}': { 'f:volumeName': {} } } }, 'f:status': { '.': {} }, 'v:"x"': {} };
    expect(dotted(pathsOf(fields))).to.deep.equal(['spec.cpus', 'spec.volumes.k:{"name":"a"}.volumeName', 'status']);
    expect(pathsOf({})).to.deep.equal([]);
  });

  it('round-trips a configuration\'s owned paths through FieldsV1 (property)', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'cairn.dev/x', 'f:odd', '.');
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.integer(),
        fc.string({ maxLength: 2 }),
        fc.array(fc.integer(), { maxLength: 2 }),
        fc.dictionary(key, tie('v'), { maxKeys: 3, noNullPrototype: true }),
      ),
    })).v;
    const cfg = fc.record({
      metadata: fc.record({ name: fc.constant('web'), labels: fc.dictionary(key, fc.string(), { maxKeys: 2, noNullPrototype: true }) }, { requiredKeys: ['name'] }),
      spec: fc.dictionary(key, value, { maxKeys: 4, noNullPrototype: true }),
    });
    fc.assert(
      fc.property(cfg, (c) => {
        const owned = ownedPaths({ apiVersion: API_VERSION, kind: 'Instance', ...c });
        expect(canonical(pathsOf(toFieldsV1(owned)))).to.deep.equal(canonical(owned));
      }),
    );
  });
});

describe('server-side apply of associative lists (x-kubernetes-list-map-keys)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          volumes: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, volumeName: { type: 'string' } } } },
          command: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  };
  const vol = (name: string, volumeName = name) => ({ name, volumeName });

  it('two managers each apply their own item: both stay, each owning its item', () => {
    const a = serverSideApply(shell(), config({ volumes: [vol('a')] }), 'alice', false, T1, schema);
    const b = serverSideApply(a, config({ volumes: [vol('b')] }), 'bob', false, T2, schema);
    expect(b.spec.volumes).to.deep.equal([vol('a'), vol('b')]);
    expect(entryOf(b, 'bob')!.fieldsV1).to.deep.equal({ 'f:spec': { 'f:volumes': { 'k:{"name":"b"}': { 'f:name': {}, 'f:volumeName': {} } } } });
  });

  it('an item is merged by its key; changing another manager\'s item conflicts; dropping one\'s own item removes only it', () => {
    const a = serverSideApply(shell(), config({ volumes: [vol('a'), vol('x')] }), 'alice', false, T1, schema);
    const b = serverSideApply(a, config({ volumes: [vol('b')] }), 'bob', false, T2, schema);
    const err = catchApiError(() => serverSideApply(b, config({ volumes: [vol('a', 'other')] }), 'bob', false, T2, schema));
    expect(err.code).to.equal(409);
    expect(err.message).to.include('conflict with "alice": .spec.volumes.k:{"name":"a"}.volumeName');
    const dropped = serverSideApply(b, config({ volumes: [vol('a')] }), 'alice', false, T2, schema);
    expect(dropped.spec.volumes).to.deep.equal([vol('a'), vol('b')]);
  });

  it('drops exactly the items a manager stopped applying, however its recorded entry names them (review: alternating key sets once removed the wrong items)', () => {
    // A client may write managedFields: items named by the schema's key and by key and value, in turn.
    const item = (n: string, full: boolean) => `k:${JSON.stringify(full ? vol(n) : { name: n })}`;
    const cases: [owned: string, applied: string, left: string][] = [
      ['bcd', '', 'ae'],
      ['abcde', '', ''],
      ['bd', '', 'ace'],
      // c, named by other fields than the key, is another path: dropped, then applied again at the end.
      ['bcd', 'c', 'aec'],
    ];
    for (const [owned, applied, left] of cases) {
      const live = { ...shell(), spec: { volumes: [...'abcde'].map((n) => vol(n)) } } as KubeObject;
      const fieldsV1 = { 'f:spec': { 'f:volumes': Object.fromEntries([...owned].map((n, i) => [item(n, i % 2 === 1), { 'f:name': {}, 'f:volumeName': {} }])) } };
      live.metadata.managedFields = [{ manager: 'alice', operation: 'Apply', apiVersion: API_VERSION, time: T1, fieldsType: 'FieldsV1', fieldsV1 }] as unknown as Record<string, unknown>[];
      const out = serverSideApply(live, config({ volumes: [...applied].map((n) => vol(n)) }), 'alice', false, T2, schema);
      expect(((out.spec?.volumes ?? []) as { name: string }[]).map((v) => v.name).join(''), `${owned} applied, then ${applied}`).to.equal(left);
    }
  });

  it('a list without list-map keys stays one value: the last applier\'s', () => {
    const a = serverSideApply(shell(), config({ command: ['x'] }), 'alice', false, T1, schema);
    expect(() => serverSideApply(a, config({ command: ['y'] }), 'bob', false, T2, schema)).to.throw(ApiErrorLike);
  });
});
