import { expect } from 'chai';
import { configMapCauses, MAX_DATA_BYTES, normalizeSecret, secretCauses } from '../../../../apiserver/validation/config-data.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';

const secret = (fields: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, ...fields });
const fields = (causes: { field?: string }[]) => causes.map((c) => c.field);

describe('Secret and ConfigMap rules (kube strategies)', () => {
  it('folds stringData into data as base64, stringData winning, and defaults type to Opaque', () => {
    const s = secret({ data: { a: 'eA==', b: 'eQ==' }, stringData: { b: 'zz', c: 'hunter2' } });
    normalizeSecret(s);
    expect(s).to.deep.equal(secret({ data: { a: 'eA==', b: 'eno=', c: 'aHVudGVyMg==' }, type: 'Opaque' }));
    const typed = secret({ type: 'helm.sh/release.v1' });
    normalizeSecret(typed);
    expect(typed.type).to.equal('helm.sh/release.v1');
  });

  it('refuses bad keys, values that are not base64, and data over 1 MiB, by field', () => {
    expect(fields(secretCauses(secret({ data: { 'a b': 'eA==', ok: 'not base64!', '..': 'eA==' } }), undefined))).to.deep.equal(['data[a b]', 'data[..]', 'data[ok]']);
    const big = Buffer.alloc(MAX_DATA_BYTES + 3).toString('base64');
    expect(fields(secretCauses(secret({ data: { big } }), undefined))).to.deep.equal(['data']);
    expect(secretCauses(secret({ data: { 'tls.crt': 'eA==', KEY_1: '' } }), undefined)).to.deep.equal([]);
  });

  it('holds an immutable Secret\'s data and type, and immutable itself', () => {
    const old = secret({ data: { a: 'eA==' }, type: 'Opaque', immutable: true });
    expect(secretCauses({ ...old, metadata: { name: 's', labels: { x: 'y' } } }, old)).to.deep.equal([]);
    expect(fields(secretCauses({ ...old, data: { a: 'eQ==' } }, old))).to.deep.equal(['data']);
    expect(fields(secretCauses({ ...old, immutable: false }, old))).to.deep.equal(['immutable']);
    expect(fields(secretCauses({ ...old, type: 'x' }, old))).to.deep.equal(['type']);
  });

  it('ConfigMap: a key in data and binaryData both is a duplicate; binaryData must be base64; immutable holds both', () => {
    const cm = (f: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, ...f });
    expect(fields(configMapCauses(cm({ data: { a: 'x' }, binaryData: { a: 'eA==', b: '%%' } }), undefined))).to.deep.equal(['binaryData[b]', 'binaryData[a]']);
    const old = cm({ data: { a: 'x' }, immutable: true });
    expect(fields(configMapCauses(cm({ data: { a: 'y' }, immutable: true }), old))).to.deep.equal(['data']);
    expect(configMapCauses(cm({ data: { a: 'x' }, immutable: true }), old)).to.deep.equal([]);
  });
});
