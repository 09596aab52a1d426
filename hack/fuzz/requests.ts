/**
 * Generated requests for fuzzing the apiserver (issue 17): every endpoint,
 * method, content type and query parameter, with bodies that are valid,
 * mutated, random or hostile. The hostile seeds are the shapes that once
 * stalled the event loop, answered 500 or stored a poison object; they come
 * up often, alone and mixed into otherwise valid objects.
 */
import fc from 'fast-check';

/** One request, as sent on the wire. */
export interface FuzzRequest {
  method: string;
  path: string;
  contentType?: string;
  body?: string;
  /** undefined: the admin token; a string: that Authorization header; null: none. */
  authorization?: string | null;
}

/** The Clusters (namespaces) the fuzz works in; created before it starts. */
export const FUZZ_NAMESPACES = ['fuzz-a', 'fuzz-b'];

const GROUP = '/apis/cairn.dev/v1alpha1';
const CAIRN_KINDS: Record<string, string> = { instances: 'Instance', volumes: 'Volume', workitems: 'WorkItem', nodes: 'Node', clusters: 'Cluster' };
const CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  '',
];

/** `{"a": {"a": ...}}`, `depth` levels deep, as text (never built as an object). */
const deepJson = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** The hostile bodies of issue 17 and their relatives. */
export const HOSTILE_BODIES: { contentType: string; body: string }[] = [
  { contentType: 'application/apply-patch+yaml', body: `apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata: {name: x}\n${'? '.repeat(300)}` },
  { contentType: 'application/apply-patch+yaml', body: `metadata: {name: x}\n${'? '.repeat(1000)}` },
  { contentType: 'application/apply-patch+yaml', body: 'apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata: &m {name: x, labels: *m}\n' },
  { contentType: 'application/yaml', body: 'apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata: &m {name: x, labels: *m}\n' },
  { contentType: 'application/yaml', body: `a: &a [x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`).join('\n')}\n` },
  { contentType: 'application/yaml', body: `a: ${'['.repeat(5000)}${']'.repeat(5000)}` },
  { contentType: 'application/json', body: deepJson(4000) },
  { contentType: 'application/json', body: `{"apiVersion":"cairn.dev/v1alpha1","kind":"Instance","metadata":{"name":"poison","managedFields":[{"manager":"x","operation":"Update","fieldsType":"FieldsV1","fieldsV1":${deepJson(3500)}}]},"spec":{"cpus":1,"memory":"1Mi"}}` },
  { contentType: 'application/json-patch+json', body: JSON.stringify([{ op: 'add', path: '/metadata/annotations', value: { a: 'x' } }, ...Array.from({ length: 23 }, (_, i) => ({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/c${i}` }))]) },
  { contentType: 'application/json-patch+json', body: JSON.stringify(Array.from({ length: 12_000 }, () => ({ op: 'test', path: '/kind', value: 'Instance' }))) },
  { contentType: 'application/json', body: JSON.stringify({ metadata: { name: 'wide' }, spec: { a: Array.from({ length: 200_000 }, (_, i) => i) } }) },
  { contentType: 'application/json', body: JSON.stringify({ metadata: { name: 'long' }, spec: { a: 'x'.repeat(1_400_000) } }) },
  { contentType: 'application/json', body: '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}, "metadata": {"name": "proto"}}' },
  { contentType: 'application/merge-patch+json', body: '{"metadata": {"__proto__": {"admin": true}, "labels": {"__proto__": "x"}}}' },
  { contentType: 'application/json', body: '\u0000\uffff\ud800' },
];

const name = fc.oneof(fc.constantFrom('x', 'a', 'target', 'poison', 'fuzz-a', 'Bad_Name', '..', '%2e%2e', 'a'.repeat(300)), fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/));
const namespace = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...FUZZ_NAMESPACES) }, { weight: 1, arbitrary: fc.constantFrom('default', 'kube-system', 'missing', '-bad-') });
const segment = fc.oneof(fc.constantFrom('', '.', '..', '%00', '%zz', '//', '?', '#', 'é', '\u202e'), fc.string({ maxLength: 12 }).map(encodeURIComponent));

/** Paths: real resources and subresources of every kind, built-ins, discovery, and garbage. */
const path = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom('instances', 'volumes', 'workitems', 'nodes'), namespace, fc.option(name), fc.constantFrom('', '/status', '/scale', '/x')).map(([r, ns, n, sub]) => `${GROUP}/namespaces/${ns}/${r}${n === null ? '' : `/${n}${sub}`}`) },
  { weight: 2, arbitrary: fc.tuple(fc.option(name), fc.constantFrom('', '/status')).map(([n, sub]) => `${GROUP}/clusters${n === null ? '' : `/${n}${sub}`}`) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('/apis/coordination.k8s.io/v1', '/api/v1', '/apis/events.k8s.io/v1', '/apis/rbac.authorization.k8s.io/v1'), fc.constantFrom('leases', 'events', 'roles', 'rolebindings', 'secrets', 'configmaps'), namespace, fc.option(name)).map(([g, r, ns, n]) => `${g}/namespaces/${ns}/${r}${n === null ? '' : `/${n}`}`) },
  { weight: 1, arbitrary: fc.constantFrom('/api', '/apis', `${GROUP}`, '/apis/cairn.dev', '/api/v1', '/api/v1/namespaces', '/openapi/v3', '/openapi/v3/apis/cairn.dev/v1alpha1', '/version', '/healthz', '/readyz', '/livez', '/metrics', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', '/apis/rbac.authorization.k8s.io/v1/clusterroles') },
  { weight: 1, arbitrary: fc.array(segment, { maxLength: 8 }).map((s) => `/${s.join('/')}`) },
);

const queryValue = fc.oneof(fc.constantFrom('', 'true', 'false', '0', '1', '-1', '500', '99999999999999999999', 'All', 'Strict', 'Warn', 'Ignore', 'Background', 'Foreground', 'Orphan', 'a=b', 'a in (b)', 'spec.nodeName=x', 'metadata.name!=y', '!a', 'a,,b'), fc.string({ maxLength: 20 }));
const queryKey = fc.constantFrom('limit', 'continue', 'labelSelector', 'fieldSelector', 'resourceVersion', 'resourceVersionMatch', 'dryRun', 'fieldManager', 'force', 'fieldValidation', 'propagationPolicy', 'gracePeriodSeconds', 'allowWatchBookmarks', 'includeObject', 'pretty', 'x', '');
/** A query string; a watch always gets a short timeout (the runner also stops reading it after a moment). */
const query = fc.tuple(fc.array(fc.tuple(queryKey, queryValue), { maxLength: 4 }), fc.boolean()).map(([pairs, watch]) => {
  const q = new URLSearchParams(pairs);
  if (watch) q.set('watch', 'true'), q.set('timeoutSeconds', '1');
  const s = q.toString();
  return s ? `?${s}` : '';
});

/** A valid-looking object of a kind, to be mutated. */
const objectOf = (kind: string, n: string) => ({ apiVersion: 'cairn.dev/v1alpha1', kind, metadata: { name: n, labels: { fuzz: 'yes' } }, spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } } });
/** A JSON value put somewhere inside an otherwise valid object. */
const mutated = fc.tuple(fc.constantFrom(...Object.values(CAIRN_KINDS)), name, fc.constantFrom('metadata', 'spec', 'status', 'metadata.labels', 'metadata.annotations', 'spec.process', 'metadata.managedFields', 'metadata.ownerReferences', 'metadata.finalizers'), fc.jsonValue({ maxDepth: 4 })).map(([kind, n, at, value]) => {
  const obj: Record<string, any> = objectOf(kind, n);
  const keys = at.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) cur = cur[k] ??= {};
  cur[keys[keys.length - 1]!] = value;
  return JSON.stringify(obj);
});
const jsonPatchOps = fc.array(fc.record({ op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus'), path: fc.constantFrom('/spec/cpus', '/metadata/labels/a', '/metadata', '/', '', '/spec/process/command/0', '/metadata/annotations', '/metadata/annotations/x', '/-'), from: fc.constantFrom('/spec', '/metadata/labels', '/metadata', ''), value: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: ['op', 'path'] }), { maxLength: 30 }).map((ops) => JSON.stringify(ops));
const yamlOf = (json: string) => json.replace(/[{},]/g, (c) => (c === ',' ? ', ' : c));

const body = fc.oneof(
  { weight: 3, arbitrary: mutated },
  { weight: 2, arbitrary: jsonPatchOps },
  { weight: 1, arbitrary: mutated.map(yamlOf) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')) },
);

/** Any request, hostile seeds included (about one in six). */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      method: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND'),
      path: fc.tuple(path, query).map(([p, q]) => p + q),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      body: fc.option(body, { nil: undefined, freq: 4 }),
      // Mostly the admin's token, so requests get past authentication to the code behind it.
      authorization: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('Bearer nope', 'Basic YTpi', 'Bearer ', '') }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...HOSTILE_BODIES), fc.constantFrom('POST', 'PUT', 'PATCH'), fc.constantFrom('instances', 'volumes', 'workitems'), namespace).map(([h, method, r, ns]) => ({
      method,
      path: `${GROUP}/namespaces/${ns}/${r}${method === 'POST' ? '' : '/x'}?fieldManager=fuzz`,
      contentType: h.contentType,
      body: h.body,
    })),
  },
);
