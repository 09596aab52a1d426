import { expect } from 'chai';
import fc from 'fast-check';
import { decode, encode, sameContent, type KubeObject } from '../../../../apiserver/storage/codec.js';
import { jsonValue } from '../helpers.js';

/** A copy of `v` with every object's keys inserted in a shuffled order. */
function reordered(v: unknown, order: (keys: string[]) => string[]): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => reordered(x, order));
  const out: Record<string, unknown> = {};
  for (const k of order(Object.keys(v))) out[k] = reordered((v as Record<string, unknown>)[k], order);
  return out;
}

const json = jsonValue(fc.string({ maxLength: 4 }).filter((k) => k !== '__proto__'));

const kubeObject = fc.record({
  apiVersion: fc.constant('cairn.dev/v1alpha1'),
  kind: fc.constant('Instance'),
  metadata: fc.record({ name: fc.string(), resourceVersion: fc.integer({ min: 1 }).map(String), labels: fc.dictionary(fc.string().filter((k) => k !== '__proto__'), fc.string(), { noNullPrototype: true }) }),
  spec: json,
}) as fc.Arbitrary<KubeObject>;

describe('encode', () => {
  it('drops metadata.resourceVersion', () => {
    const obj: KubeObject = { apiVersion: 'v', kind: 'Instance', metadata: { resourceVersion: '5', name: 'web' }, spec: { b: 1 } };
    expect(encode(obj)).to.equal('{"apiVersion":"v","kind":"Instance","metadata":{"name":"web"},"spec":{"b":1}}');
  });

  it('does not mutate the object', () => {
    const obj: KubeObject = { metadata: { name: 'a', resourceVersion: '3' } };
    encode(obj);
    expect(obj.metadata.resourceVersion).to.equal('3');
  });

});

describe('sameContent', () => {
  it('holds whatever order the keys were inserted in (property)', () => {
    fc.assert(
      fc.property(kubeObject, fc.func(fc.integer()), (obj, rank) => {
        const shuffle = (keys: string[]) => [...keys].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
        const reverse = (keys: string[]) => [...keys].reverse();
        expect(sameContent(reordered(obj, shuffle) as KubeObject, obj)).to.equal(true);
        expect(sameContent(reordered(obj, reverse) as KubeObject, obj)).to.equal(true);
      }),
    );
  });

  it('ignores the resourceVersion (property)', () => {
    fc.assert(
      fc.property(kubeObject, fc.integer({ min: 1 }), (obj, rv) => {
        expect(sameContent({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } }, obj)).to.equal(true);
      }),
    );
  });

  it('sees a changed value', () => {
    expect(sameContent({ metadata: { name: 'a' }, spec: { cpus: 1 } }, { metadata: { name: 'a' }, spec: { cpus: 2 } })).to.equal(false);
  });
});

describe('decode', () => {
  it('parses the stored bytes and sets resourceVersion to the revision', () => {
    const obj = decode(Buffer.from('{"kind":"Instance","metadata":{"name":"web"}}'), '17');
    expect(obj).to.deep.equal({ kind: 'Instance', metadata: { name: 'web', resourceVersion: '17' } });
    expect(decode('{"metadata":{"name":"a","resourceVersion":"1"}}', '9').metadata.resourceVersion).to.equal('9');
  });

  it('inverts encode apart from the resourceVersion (property)', () => {
    fc.assert(
      fc.property(kubeObject, (obj) => {
        expect(decode(encode(obj), obj.metadata.resourceVersion!)).to.deep.equal(obj);
      }),
    );
  });
});
