import { expect } from 'chai';
import protobuf from 'protobufjs';
import { decodeProtobuf } from '../../../../apiserver/http/protobuf.js';
import { ApiError } from '../../../../apiserver/errors.js';
import { catchApiError } from '../helpers.js';

/**
 * Bodies built field by field with protobufjs's writer, the way Go's generated code lays them out
 * (k8s.io/api generated.proto numbers), so the decoder is checked against the wire format itself.
 */
const w = () => protobuf.Writer.create();
const str = (wr: protobuf.Writer, id: number, s: string) => wr.uint32((id << 3) | 2).string(s);
const bytes = (wr: protobuf.Writer, id: number, b: Uint8Array) => wr.uint32((id << 3) | 2).bytes(b);
const msg = (wr: protobuf.Writer, id: number, inner: protobuf.Writer) => bytes(wr, id, inner.finish());
const mapEntry = (wr: protobuf.Writer, id: number, k: string, v: Uint8Array | string) => {
  const e = w();
  str(e, 1, k);
  if (typeof v === 'string') str(e, 2, v);
  else bytes(e, 2, v);
  return msg(wr, id, e);
};

function envelope(apiVersion: string, kind: string, raw: protobuf.Writer): Buffer {
  const typeMeta = w();
  str(typeMeta, 1, apiVersion);
  str(typeMeta, 2, kind);
  const unknown = w();
  msg(unknown, 1, typeMeta);
  bytes(unknown, 2, raw.finish());
  str(unknown, 3, '');
  str(unknown, 4, '');
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from(unknown.finish())]);
}

function objectMeta(name: string): protobuf.Writer {
  const m = w();
  str(m, 1, name);
  str(m, 2, ''); // Go writes empty strings: they must not come out
  str(m, 3, 'demo');
  msg(m, 8, w()); // a zero Time (creationTimestamp unset)
  mapEntry(m, 11, 'app', 'web');
  mapEntry(m, 12, 'note', 'x');
  str(m, 14, 'cairn.dev/agent');
  return m;
}

describe('protobuf request bodies (application/vnd.kubernetes.protobuf)', () => {
  it('decodes a Secret as kubectl create secret sends it: data as base64, empty strings and zero times left out', () => {
    const s = w();
    msg(s, 1, objectMeta('db'));
    mapEntry(s, 2, 'password', Buffer.from('hunter2'));
    str(s, 3, 'Opaque');
    mapEntry(s, 4, 'user', 'admin');
    expect(decodeProtobuf(envelope('v1', 'Secret', s))).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'demo', labels: { app: 'web' }, annotations: { note: 'x' }, finalizers: ['cairn.dev/agent'] },
      data: { password: 'aHVudGVyMg==' },
      type: 'Opaque',
      stringData: { user: 'admin' },
    });
  });

  it('decodes RBAC objects, a Namespace, and DeleteOptions', () => {
    const rule = w();
    for (const v of ['get', 'list']) str(rule, 1, v);
    str(rule, 2, 'cairn.dev');
    str(rule, 3, 'instances');
    const role = w();
    msg(role, 1, objectMeta('r'));
    msg(role, 2, rule);
    expect(decodeProtobuf(envelope('rbac.authorization.k8s.io/v1', 'Role', role)).rules).to.deep.equal([{ verbs: ['get', 'list'], apiGroups: ['cairn.dev'], resources: ['instances'] }]);

    const ns = w();
    msg(ns, 1, objectMeta('team'));
    expect(decodeProtobuf(envelope('v1', 'Namespace', ns)).metadata).to.include({ name: 'team' });

    const del = w();
    str(del, 4, 'Background');
    str(del, 5, 'All');
    expect(decodeProtobuf(envelope('v1', 'DeleteOptions', del))).to.deep.equal({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', dryRun: ['All'] });
  });

  it('answers 400 for a time past what a Date holds (it once threw a RangeError: a 500)', () => {
    const m = objectMeta('far');
    msg(m, 8, w().uint32(1 << 3).int64(9e12)); // creationTimestamp.seconds, beyond year 275760
    const s = w();
    msg(s, 1, m);
    const err = catchApiError(() => decodeProtobuf(envelope('v1', 'Secret', s)));
    expect(err).to.include({ code: 400 });
    expect(err.message).to.match(/creationTimestamp: 9000000000000 seconds is not a time/);
  });

  it('answers 415 for kinds it does not know and 400 for bodies that are not protobuf', () => {
    expect(catchApiError(() => decodeProtobuf(envelope('apps/v1', 'Deployment', w())))).to.include({ code: 415 });
    expect(catchApiError(() => decodeProtobuf(Buffer.from('{"kind":"Secret"}'))).message).to.include('starts with "k8s\\0"');
    const err = catchApiError(() => decodeProtobuf(Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0a, 0xff])])));
    expect(err).to.be.instanceOf(ApiError);
    expect(err.code).to.equal(400);
  });
});
