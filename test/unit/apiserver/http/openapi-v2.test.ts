import { expect } from 'chai';
import protobuf from 'protobufjs';
import YAML from 'yaml';
import { loadCrds } from '../../../../apiserver/crd-loader.js';
import { OPENAPI_V2_PROTOBUF, OpenApiV2 } from '../../../../apiserver/http/openapi-v2.js';
import { Registry } from '../../../../apiserver/registry.js';
import { CRD_DIR } from '../../../support/paths.js';

/** Reads the protobuf with a reader written from gnostic's field numbers alone, independent of the encoder. */
function fields(buf: Uint8Array): Map<number, Uint8Array[]> {
  const r = protobuf.Reader.create(buf);
  const out = new Map<number, Uint8Array[]>();
  while (r.pos < r.len) {
    const tag = r.uint32();
    if ((tag & 7) !== 2) throw new Error(`unexpected wire type ${tag & 7}`);
    const id = tag >>> 3;
    (out.get(id) ?? out.set(id, []).get(id)!).push(r.bytes());
  }
  return out;
}
const text = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString();

describe('OpenAPI v2 (/openapi/v2)', () => {
  const v2 = new OpenApiV2(new Registry(loadCrds(CRD_DIR)));

  it('is a Swagger 2.0 document whose definitions carry x-kubernetes-group-version-kind (JSON)', () => {
    const doc = JSON.parse(v2.json);
    expect(doc.swagger).to.equal('2.0');
    expect(doc.definitions['dev.cairn.v1alpha1.Instance']['x-kubernetes-group-version-kind']).to.deep.equal([{ group: 'cairn.dev', version: 'v1alpha1', kind: 'Instance' }]);
  });

  it('encodes the same document in gnostic protobuf: swagger (1), definitions (9) of named schemas with type (22) and vendor extensions (31)', () => {
    const doc = fields(v2.protobuf);
    expect(text(doc.get(1)![0])).to.equal('2.0');
    const named = fields(doc.get(9)![0]!).get(1)!.map((b) => fields(b));
    const instance = named.find((n) => text(n.get(1)![0]) === 'dev.cairn.v1alpha1.Instance')!;
    const schema = fields(instance.get(2)![0]!);
    expect(text(fields(schema.get(22)![0]!).get(1)![0])).to.equal('object');
    const ext = fields(schema.get(31)![0]!);
    expect(text(ext.get(1)![0])).to.equal('x-kubernetes-group-version-kind');
    expect(YAML.parse(text(fields(ext.get(2)![0]!).get(2)![0]))).to.deep.equal([{ group: 'cairn.dev', version: 'v1alpha1', kind: 'Instance' }]);
    expect(named).to.have.length(Object.keys(JSON.parse(v2.json).definitions).length);
  });

  it("answers protobuf to client-go's Accept (either spelling), JSON otherwise, and names its type so Go's MIME parser takes it", () => {
    expect(OpenApiV2.wantsProtobuf('application/com.github.proto-openapi.spec.v2@v1.0+protobuf')).to.equal(true);
    expect(OpenApiV2.wantsProtobuf('application/json, application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.9')).to.equal(true);
    expect(OpenApiV2.wantsProtobuf('application/json')).to.equal(false);
    expect(OPENAPI_V2_PROTOBUF).to.not.include('@');
  });
});
