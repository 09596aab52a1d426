/**
 * `/openapi/v2`: the Swagger 2.0 document older clients still load.
 * kubectl falls back to it to validate a `kind: List` (`kubectl get -o yaml
 * | kubectl apply -f -`), and Argo CD's gitops-engine reads it to build its
 * cluster cache. Both ask for gnostic's protobuf encoding
 * (openapiv2/OpenAPIv2.proto), which is served, encoded with protobufjs;
 * plain JSON goes to clients that accept only that.
 *
 * Each kind is published as an object schema carrying
 * `x-kubernetes-group-version-kind`, with its description but without its
 * fields: a Swagger 2.0 client would validate fields by rules that differ
 * from the server's (no `nullable`, no `x-kubernetes-preserve-unknown-fields`),
 * so field checks stay with the server, which answers 422 with the path
 * (kubectl explain reads the full schemas from OpenAPI v3).
 */
import YAML from 'yaml';
import { cairnVersion } from '../../api/version.js';
import type { Registry } from '../registry.js';
import type { ResourceDefinition } from '../resources.js';
import { schemaName } from './openapi.js';
import { field as one, protoRoot, repeated as many, type ProtoFields } from './proto-schema.js';

/** The media type of the answer: what clients ask for with its '@' spelled '.', since Go's MIME parser refuses an '@' in a Content-Type. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
// What client-go sends in Accept (kube-openapi accepts both spellings).
const ACCEPTED = new Set([OPENAPI_V2_PROTOBUF, 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf']);


// The part of gnostic's OpenAPIv2.proto this document uses, by its field numbers.
const MESSAGES: Record<string, ProtoFields> = {
  Document: { swagger: one('string', 1), info: one('Info', 2), paths: one('Paths', 8), definitions: one('Definitions', 9) },
  Info: { title: one('string', 1), version: one('string', 2), description: one('string', 3) },
  Paths: { path: many('NamedAny', 2) },
  Definitions: { additionalProperties: many('NamedSchema', 1) },
  NamedSchema: { name: one('string', 1), value: one('Schema', 2) },
  Schema: { description: one('string', 4), type: one('TypeItem', 22), vendorExtension: many('NamedAny', 31) },
  TypeItem: { value: many('string', 1) },
  NamedAny: { name: one('string', 1), value: one('Any', 2) },
  Any: { yaml: one('string', 2) },
};
const documentType = protoRoot(MESSAGES).lookupType('Document');

interface Definition {
  description: string;
  gvk: { group: string; version: string; kind: string }[];
}

/** The document in both encodings, built once: the served kinds never change while running. */
export class OpenApiV2 {
  readonly json: string;
  readonly protobuf: Buffer;

  constructor(registry: Registry) {
    const defs = new Map<string, Definition>();
    for (const def of registry.defs) defs.set(schemaName(def), definition(def));
    this.json = JSON.stringify({
      swagger: '2.0',
      info: { title: 'Cairn', version: cairnVersion() },
      paths: {},
      definitions: Object.fromEntries([...defs].map(([name, d]) => [name, { type: 'object', description: d.description, 'x-kubernetes-group-version-kind': d.gvk }])),
    });
    const message = documentType.fromObject({
      swagger: '2.0',
      info: { title: 'Cairn', version: cairnVersion() },
      paths: {},
      definitions: {
        additionalProperties: [...defs].map(([name, d]) => ({
          name,
          value: { description: d.description, type: { value: ['object'] }, vendorExtension: [{ name: 'x-kubernetes-group-version-kind', value: { yaml: YAML.stringify(d.gvk) } }] },
        })),
      },
    });
    this.protobuf = Buffer.from(documentType.encode(message).finish());
  }

  /** Whether an Accept header asks for the protobuf encoding (client-go always does). */
  static wantsProtobuf(accept: string | undefined): boolean {
    return (accept ?? '').split(',').some((t) => ACCEPTED.has(t.trim().split(';')[0]!));
  }
}

function definition(def: ResourceDefinition): Definition {
  return { description: def.schema.description ?? def.kind, gvk: [{ group: def.group, version: def.version, kind: def.kind }] };
}
