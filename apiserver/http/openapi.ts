/**
 * OpenAPI v3 (API.md "OpenAPI v3"), generated from the same definitions the
 * apiserver validates with: one document per group/version whose schemas
 * carry `x-kubernetes-group-version-kind`, and whose patch operations
 * declare `fieldValidation` so kubectl leaves validation to the server.
 * `kubectl explain` reads the same documents.
 */
import { createHash } from 'node:crypto';
import { objectMetaSchema } from '../builtin/object-meta.js';
import type { Registry } from '../registry.js';
import { groupVersion, type JSONSchemaProps, type ResourceDefinition } from '../resources.js';

const META_REF = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';

/** The OpenAPI documents, computed once (the served kinds never change while running). */
export class OpenApi {
  private readonly docs = new Map<string, { body: string; hash: string }>();

  constructor(registry: Registry) {
    const gvs = [...new Set(registry.defs.map(groupVersion))];
    for (const gv of gvs) {
      const body = JSON.stringify(document(registry.inGroupVersion(gv)));
      this.docs.set(urlPath(gv), { body, hash: createHash('sha512').update(body).digest('hex').slice(0, 128).toUpperCase() });
    }
  }

  /** `GET /openapi/v3`. */
  index(): Record<string, unknown> {
    const paths: Record<string, unknown> = {};
    for (const [p, d] of this.docs) paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${d.hash}` };
    return { paths };
  }

  /** The document at `/openapi/v3/<path>`, if any. */
  document(path: string): string | undefined {
    return this.docs.get(path)?.body;
  }
}

function urlPath(gv: string): string {
  return gv.includes('/') ? `apis/${gv}` : `api/${gv}`;
}

/** `dev.cairn.v1alpha1.Instance`, `io.k8s.api.coordination.v1.Lease`, `io.k8s.api.core.v1.Event`. */
export function schemaName(def: ResourceDefinition, kind = def.kind): string {
  if (!def.group) return `io.k8s.api.core.${def.version}.${kind}`;
  if (def.group.endsWith('.k8s.io')) return `io.k8s.api.${def.group.replace(/\.k8s\.io$/, '')}.${def.version}.${kind}`;
  return `${def.group.split('.').reverse().join('.')}.${def.version}.${kind}`;
}

function document(defs: ResourceDefinition[]): Record<string, unknown> {
  const schemas: Record<string, unknown> = {
    'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMetaSchema,
    [LIST_META]: {
      type: 'object',
      description: 'ListMeta describes metadata that synthetic resources must have, including lists.',
      properties: {
        resourceVersion: { type: 'string', description: 'The version of the list, for watching from it.' },
        continue: { type: 'string', description: 'Token to fetch the next page, when the list was limited.' },
      },
    },
  };
  const paths: Record<string, unknown> = {};
  for (const def of defs) {
    const gvk = { group: def.group, version: def.version, kind: def.kind };
    schemas[schemaName(def)] = { ...withMetaRef(def.schema), 'x-kubernetes-group-version-kind': [gvk] };
    schemas[schemaName(def, def.listKind)] = listSchema(def);
    Object.assign(paths, resourcePaths(def, gvk));
  }
  return { openapi: '3.0.0', info: { title: 'Cairn', version: 'v1.32.0' }, paths, components: { schemas } };
}

function withMetaRef(schema: JSONSchemaProps): JSONSchemaProps {
  const metadata = { description: "Standard object's metadata.", allOf: [{ $ref: META_REF }] };
  return { ...schema, properties: { ...schema.properties, metadata: metadata as JSONSchemaProps } };
}

function listSchema(def: ResourceDefinition): Record<string, unknown> {
  return {
    type: 'object',
    description: `${def.listKind} is a list of ${def.kind}.`,
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', description: 'The versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'The REST resource this object represents.' },
      metadata: { description: 'Standard list metadata.', allOf: [{ $ref: `#/components/schemas/${LIST_META}` }] },
      items: { type: 'array', description: `List of ${def.plural}.`, items: { $ref: `#/components/schemas/${schemaName(def)}` } },
    },
    'x-kubernetes-group-version-kind': [{ group: def.group, version: def.version, kind: def.listKind }],
  };
}

const q = (name: string, description: string) => ({ name, in: 'query', description, schema: { type: 'string' }, uniqueItems: true });
const writeParams = [
  q('dryRun', 'When present, the change is validated but not persisted. Valid value: All.'),
  q('fieldManager', 'The name of the actor making the change.'),
  q('fieldValidation', 'How to treat unknown fields: Ignore, Warn (default) or Strict.'),
];

function resourcePaths(def: ResourceDefinition, gvk: Record<string, string>): Record<string, unknown> {
  const base = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  const scope = def.namespaced ? `${base}/namespaces/{namespace}/${def.plural}` : `${base}/${def.plural}`;
  const ref = { $ref: `#/components/schemas/${schemaName(def)}` };
  const body = (types: string[]) => ({ content: Object.fromEntries(types.map((t) => [t, { schema: types.length > 1 ? { type: 'object' } : ref }])), required: true });
  const op = (action: string, extra: Record<string, unknown> = {}) => ({
    description: `${action} the specified ${def.kind}`,
    operationId: `${action}${def.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: ref } } } },
    ...extra,
  });
  const pathParams = [
    { name: 'name', in: 'path', required: true, description: `name of the ${def.kind}`, schema: { type: 'string' } },
    ...(def.namespaced ? [{ name: 'namespace', in: 'path', required: true, description: 'object name and auth scope (the Cluster)', schema: { type: 'string' } }] : []),
  ];
  const patchTypes = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
  const item = {
    parameters: pathParams,
    get: op('get'),
    put: op('put', { parameters: writeParams, requestBody: body(['application/json']) }),
    patch: op('patch', { parameters: [...writeParams, q('force', 'Force an apply over conflicting field managers.')], requestBody: body(patchTypes) }),
    delete: op('delete', { parameters: [writeParams[0]] }),
  };
  const collection = {
    parameters: pathParams.slice(1),
    get: op('list', { parameters: [q('labelSelector', 'A selector on labels.'), q('fieldSelector', 'A selector on fields.'), q('limit', 'Page size.'), q('continue', 'Next page token.'), q('watch', 'Watch for changes.')] }),
    post: op('post', { parameters: writeParams, requestBody: body(['application/json']) }),
  };
  const paths: Record<string, unknown> = { [scope]: collection, [`${scope}/{name}`]: item };
  if (def.hasStatus) paths[`${scope}/{name}/status`] = { parameters: pathParams, get: op('get'), put: item.put, patch: item.patch };
  return paths;
}
