import { expect } from 'chai';
import {
  afterDelete,
  checkResourceVersion,
  markDeleting,
  prepareForCreate,
  prepareForUpdate,
  readyToDelete,
} from '../../../../apiserver/rest/lifecycle.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { catchApiError, testDef } from '../helpers.js';

const withStatus = testDef({ hasStatus: true });
const withoutStatus = testDef({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', hasStatus: false });
const NOW = '2025-03-01T12:00:00Z';
const EARLIER = '2025-01-01T00:00:00Z';

/** A stored object as prepareForCreate left it, at resourceVersion 7. */
function stored(extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'default', uid: 'uid-1', resourceVersion: '7', generation: 1, creationTimestamp: EARLIER, labels: { a: '1' } },
    spec: { size: 1 },
    status: { phase: 'Ready' },
    ...extra,
  };
}

/** A client's edit of `obj` (a deep copy with `edit` applied). */
function edited(obj: KubeObject, edit: (o: KubeObject) => void): KubeObject {
  const copy = structuredClone(obj);
  edit(copy);
  return copy;
}

describe('prepareForCreate', () => {
  const body: KubeObject = {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Widget',
    metadata: {
      name: 'w',
      namespace: 'default',
      labels: { a: '1' },
      uid: 'client-uid',
      resourceVersion: '99',
      generation: 42,
      creationTimestamp: EARLIER,
      deletionTimestamp: EARLIER,
      deletionGracePeriodSeconds: 30,
    },
    spec: { size: 1 },
    status: { phase: 'Ready' },
  };

  it('sets uid, creationTimestamp and generation 1, ignoring what the client sent', () => {
    const out = prepareForCreate(withStatus, body, NOW, 'server-uid');
    expect(out.metadata).to.deep.equal({ name: 'w', namespace: 'default', labels: { a: '1' }, uid: 'server-uid', creationTimestamp: NOW, generation: 1 });
    expect(out.spec).to.deep.equal({ size: 1 });
  });

  it('drops status when the kind has a status subresource, keeps it otherwise', () => {
    expect(prepareForCreate(withStatus, body, NOW, 'u')).to.not.have.property('status');
    expect(prepareForCreate(withoutStatus, body, NOW, 'u').status).to.deep.equal({ phase: 'Ready' });
  });

  it('sets no generation on kinds without a status subresource (Lease, Event)', () => {
    expect(prepareForCreate(withoutStatus, body, NOW, 'u').metadata).to.not.have.property('generation');
  });

  it('does not mutate the request body', () => {
    const before = structuredClone(body);
    prepareForCreate(withStatus, body, NOW, 'u');
    expect(body).to.deep.equal(before);
  });
});

describe('prepareForUpdate', () => {
  describe('through the main endpoint', () => {
    it('ignores status changes and keeps the stored status', () => {
      const out = prepareForUpdate(withStatus, stored(), edited(stored(), (o) => (o.status = { phase: 'Hacked' })), 'main');
      expect(out.status).to.deep.equal({ phase: 'Ready' });
    });

    it('does not add a status the stored object lacks', () => {
      const old = stored();
      delete old.status;
      const out = prepareForUpdate(withStatus, old, edited(old, (o) => (o.status = { phase: 'Ready' })), 'main');
      expect(out).to.not.have.property('status');
    });

    it('takes status from the body for kinds without a status subresource', () => {
      const out = prepareForUpdate(withoutStatus, stored(), edited(stored(), (o) => (o.status = { phase: 'New' })), 'main');
      expect(out.status).to.deep.equal({ phase: 'New' });
    });

    it('applies spec, label and annotation changes', () => {
      const next = edited(stored(), (o) => {
        o.spec.size = 2;
        o.metadata.labels = { b: '2' };
        o.metadata.annotations = { note: 'x' };
      });
      const out = prepareForUpdate(withStatus, stored(), next, 'main');
      expect(out.spec).to.deep.equal({ size: 2 });
      expect(out.metadata.labels).to.deep.equal({ b: '2' });
      expect(out.metadata.annotations).to.deep.equal({ note: 'x' });
    });
  });

  describe('through /status', () => {
    it('changes only status', () => {
      const next = edited(stored(), (o) => {
        o.status = { phase: 'Failed' };
        o.spec.size = 9;
        o.metadata.labels = { hacked: 'yes' };
      });
      const out = prepareForUpdate(withStatus, stored(), next, 'status');
      expect(out).to.deep.equal({ ...stored(), status: { phase: 'Failed' } });
    });

    it('removes status when the body has none', () => {
      const out = prepareForUpdate(withStatus, stored(), edited(stored(), (o) => delete o.status), 'status');
      expect(out).to.not.have.property('status');
    });
  });

  describe('generation', () => {
    const cases: [change: string, edit: (o: KubeObject) => void, sub: 'main' | 'status', bumps: boolean][] = [
      ['a spec change', (o) => (o.spec.size = 2), 'main', true],
      ['a new top-level field', (o) => (o.data = { k: 'v' }), 'main', true],
      ['removing spec', (o) => delete o.spec, 'main', true],
      ['a label change', (o) => (o.metadata.labels = { a: '2' }), 'main', false],
      ['an annotation change', (o) => (o.metadata.annotations = { n: 'x' }), 'main', false],
      ['a finalizer change', (o) => (o.metadata.finalizers = ['cairn.dev/x']), 'main', false],
      ['a status change through the main endpoint', (o) => (o.status = { phase: 'X' }), 'main', false],
      ['a status write', (o) => (o.status = { phase: 'X' }), 'status', false],
      ['a spec change sent to /status', (o) => (o.spec.size = 2), 'status', false],
      ['no change at all', () => undefined, 'main', false],
    ];
    for (const [change, edit, sub, bumps] of cases) {
      it(`${bumps ? 'bumps' : 'does not bump'} on ${change}`, () => {
        const out = prepareForUpdate(withStatus, stored(), edited(stored(), edit), sub);
        expect(out.metadata.generation).to.equal(bumps ? 2 : 1);
      });
    }

    it('ignores a generation the client sent', () => {
      const out = prepareForUpdate(withStatus, stored(), edited(stored(), (o) => (o.metadata.generation = 50)), 'main');
      expect(out.metadata.generation).to.equal(1);
    });

    it('is not tracked for kinds without a status subresource', () => {
      const old = stored();
      delete old.metadata.generation;
      const out = prepareForUpdate(withoutStatus, old, edited(old, (o) => (o.spec.size = 2)), 'main');
      expect(out.metadata).to.not.have.property('generation');
    });
  });

  it('preserves name, namespace, uid, creationTimestamp and deletion fields whatever the client sent', () => {
    const old = stored({ metadata: { ...stored().metadata, deletionTimestamp: NOW, deletionGracePeriodSeconds: 0, finalizers: ['cairn.dev/x'] } });
    for (const sub of ['main', 'status'] as const) {
      const next = edited(old, (o) => {
        Object.assign(o.metadata, { name: 'other', namespace: 'elsewhere', uid: 'forged', creationTimestamp: NOW });
        delete o.metadata.deletionTimestamp;
        o.metadata.deletionGracePeriodSeconds = 30;
      });
      const m = prepareForUpdate(withStatus, old, next, sub).metadata;
      expect(m, sub).to.include({ name: 'w', namespace: 'default', uid: 'uid-1', creationTimestamp: EARLIER, deletionTimestamp: NOW, deletionGracePeriodSeconds: 0 });
    }
  });

  // Regression (was a bug): apiserver/rest/lifecycle.ts prepareForUpdate pins metadata.namespace only when the stored
  // object has one, so an update of a cluster-scoped object (Cluster, Node) whose body carries
  // metadata.namespace: "x" stores namespace "x" (checkIdentity checks the namespace only for
  // namespaced kinds, and create strips it). kube rejects or clears it; expected: no namespace.
  it('does not add a namespace to a cluster-scoped object', () => {
    const old = stored();
    delete old.metadata.namespace;
    const out = prepareForUpdate(testDef({ namespaced: false }), old, edited(old, (o) => (o.metadata.namespace = 'x')), 'main');
    expect(out.metadata).to.not.have.property('namespace');
  });

  it('does not mutate the stored or the new object', () => {
    const [old, next] = [stored(), edited(stored(), (o) => (o.spec.size = 2))];
    const [oldBefore, nextBefore] = [structuredClone(old), structuredClone(next)];
    prepareForUpdate(withStatus, old, next, 'main');
    prepareForUpdate(withStatus, old, next, 'status');
    expect(old).to.deep.equal(oldBefore);
    expect(next).to.deep.equal(nextBefore);
  });

  describe('finalizers of an object being deleted', () => {
    const deleting = () => stored({ metadata: { ...stored().metadata, deletionTimestamp: NOW, finalizers: ['cairn.dev/a'] } });

    it('refuses a new finalizer', () => {
      const err = catchApiError(() => prepareForUpdate(withStatus, deleting(), edited(deleting(), (o) => o.metadata.finalizers!.push('cairn.dev/b')), 'main'));
      expect(err.message).to.contain('metadata.finalizers').and.contain('cairn.dev/b');
    });

    // Regression (was a bug): apiserver/rest/lifecycle.ts checkFinalizerRules throws badRequest (400 BadRequest) for a new
    // finalizer on an object being deleted; kube reports this as a field validation error
    // (ValidateNoNewFinalizers → field.Forbidden) i.e. 422 Invalid with a cause on metadata.finalizers.
    it('refuses a new finalizer with 422 Invalid like kube', () => {
      const err = catchApiError(() => prepareForUpdate(withStatus, deleting(), edited(deleting(), (o) => o.metadata.finalizers!.push('cairn.dev/b')), 'main'));
      expect(err.code).to.equal(422);
      expect(err.details?.causes?.[0]?.field).to.equal('metadata.finalizers');
    });

    it('allows removing finalizers', () => {
      const out = prepareForUpdate(withStatus, deleting(), edited(deleting(), (o) => (o.metadata.finalizers = [])), 'main');
      expect(out.metadata.finalizers).to.deep.equal([]);
    });

    it('allows adding finalizers while not being deleted', () => {
      const out = prepareForUpdate(withStatus, stored(), edited(stored(), (o) => (o.metadata.finalizers = ['cairn.dev/a'])), 'main');
      expect(out.metadata.finalizers).to.deep.equal(['cairn.dev/a']);
    });
  });
});

describe('readyToDelete', () => {
  const cases: [deletionTimestamp: string | undefined, finalizers: string[] | undefined, ready: boolean][] = [
    [undefined, undefined, false],
    [undefined, [], false],
    [NOW, ['cairn.dev/a'], false],
    [NOW, [], true],
    [NOW, undefined, true],
  ];
  for (const [deletionTimestamp, finalizers, ready] of cases) {
    it(`deletionTimestamp=${deletionTimestamp ?? 'unset'} finalizers=${JSON.stringify(finalizers)} → ${ready}`, () => {
      expect(readyToDelete({ metadata: { name: 'w', deletionTimestamp, finalizers } })).to.equal(ready);
    });
  }
});

describe('markDeleting', () => {
  it('sets deletionTimestamp and a zero grace period on a copy', () => {
    const obj = stored();
    const out = markDeleting(obj, NOW);
    expect(out.metadata).to.include({ deletionTimestamp: NOW, deletionGracePeriodSeconds: 0, name: 'w', uid: 'uid-1' });
    expect(obj.metadata).to.not.have.property('deletionTimestamp');
    expect(readyToDelete(out)).to.equal(true);
    expect(readyToDelete(markDeleting({ ...obj, metadata: { ...obj.metadata, finalizers: ['cairn.dev/a'] } }, NOW))).to.equal(false);
  });
});

describe('checkResourceVersion', () => {
  for (const rv of [undefined, '', '7']) {
    it(`accepts resourceVersion ${JSON.stringify(rv)} against stored "7"`, () => {
      expect(() => checkResourceVersion(withStatus, stored(), edited(stored(), (o) => (o.metadata.resourceVersion = rv)), 'w')).to.not.throw();
    });
  }

  it('refuses a stale resourceVersion with 409 Conflict naming the object', () => {
    const err = catchApiError(() => checkResourceVersion(withStatus, stored(), edited(stored(), (o) => (o.metadata.resourceVersion = '6')), 'w'));
    expect(err.code).to.equal(409);
    expect(err.reason).to.equal('Conflict');
    expect(err.message).to.equal('Operation cannot be fulfilled on widgets.cairn.dev "w": the object has been modified; please apply your changes to the latest version and try again');
    expect(err.details).to.deep.equal({ name: 'w', group: 'cairn.dev', kind: 'widgets' });
  });

  it('names a core-group resource without a group suffix', () => {
    const core = testDef({ group: '', version: 'v1', plural: 'events' });
    const err = catchApiError(() => checkResourceVersion(core, stored(), edited(stored(), (o) => (o.metadata.resourceVersion = '1')), 'e'));
    expect(err.message).to.match(/^Operation cannot be fulfilled on events "e":/);
  });
});

describe('afterDelete (propagationPolicy)', () => {
  const fins = (o: KubeObject | null) => o?.metadata.finalizers ?? [];
  it('Background: an object without finalizers goes now; one with finalizers is marked, once', () => {
    const plain = stored();
    expect(afterDelete(plain, 'Background', NOW)).to.equal(plain);
    const held = stored({ metadata: { ...stored().metadata, finalizers: ['x'] } });
    expect(afterDelete(held, 'Background', NOW)!.metadata.deletionTimestamp).to.equal(NOW);
    expect(afterDelete(markDeleting(held, EARLIER), 'Background', NOW)).to.equal(null);
  });

  it('Foreground and Orphan keep the object, marked, with kube\'s finalizer, also when it is already being deleted', () => {
    const fg = afterDelete(stored(), 'Foreground', NOW)!;
    expect(fins(fg)).to.deep.equal(['foregroundDeletion']);
    expect(fg.metadata.deletionTimestamp).to.equal(NOW);
    expect(fins(afterDelete(stored({ metadata: { ...stored().metadata, finalizers: ['x'] } }), 'Orphan', NOW))).to.deep.equal(['x', 'orphan']);
    const going = markDeleting(stored({ metadata: { ...stored().metadata, finalizers: ['x'] } }), EARLIER);
    const later = afterDelete(going, 'Foreground', NOW)!;
    expect(fins(later)).to.deep.equal(['x', 'foregroundDeletion']);
    expect(later.metadata.deletionTimestamp, 'the first deletion time stays').to.equal(EARLIER);
    expect(afterDelete(later, 'Foreground', NOW)).to.equal(null);
  });
});
