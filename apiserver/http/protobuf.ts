/**
 * Request bodies in Kubernetes' protobuf encoding
 * (`application/vnd.kubernetes.protobuf`), which kubectl's typed clients
 * send for built-in kinds: `create namespace`, `create secret`, `create
 * configmap`, `create role`/`rolebinding`, `auth reconcile`, `auth can-i`
 * (the self reviews), and Helm's deletes (DeleteOptions) of its
 * release Secrets. The body is the
 * magic `k8s\0`, then a runtime.Unknown holding the apiVersion, the kind and
 * the object's own message. Each kind's message is decoded with the field
 * numbers of k8s.io/api's generated.proto and turned into the JSON the rest
 * of the apiserver reads. Answers stay JSON, which every client accepts.
 */
import { ApiError, badRequest } from '../errors.js';
import { field as opt, protoRoot, repeated as list, stringMap as map, type ProtoFields } from './proto-schema.js';

/** The content type of a protobuf body. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);


// k8s.io/apimachinery meta/v1 and runtime, then the kinds kubectl sends, by their generated.proto numbers.
const MESSAGES: Record<string, ProtoFields> = {
  TypeMeta: { apiVersion: opt('string', 1), kind: opt('string', 2) },
  Unknown: { typeMeta: opt('TypeMeta', 1), raw: opt('bytes', 2), contentEncoding: opt('string', 3), contentType: opt('string', 4) },
  Time: { seconds: opt('int64', 1), nanos: opt('int32', 2) },
  FieldsV1: { Raw: opt('bytes', 1) },
  OwnerReference: { kind: opt('string', 1), name: opt('string', 3), uid: opt('string', 4), apiVersion: opt('string', 5), controller: opt('bool', 6), blockOwnerDeletion: opt('bool', 7) },
  ManagedFieldsEntry: { manager: opt('string', 1), operation: opt('string', 2), apiVersion: opt('string', 3), time: opt('Time', 4), fieldsType: opt('string', 6), fieldsV1: opt('FieldsV1', 7), subresource: opt('string', 8) },
  ObjectMeta: {
    name: opt('string', 1),
    generateName: opt('string', 2),
    namespace: opt('string', 3),
    selfLink: opt('string', 4),
    uid: opt('string', 5),
    resourceVersion: opt('string', 6),
    generation: opt('int64', 7),
    creationTimestamp: opt('Time', 8),
    deletionTimestamp: opt('Time', 9),
    deletionGracePeriodSeconds: opt('int64', 10),
    labels: map('string', 11),
    annotations: map('string', 12),
    ownerReferences: list('OwnerReference', 13),
    finalizers: list('string', 14),
    managedFields: list('ManagedFieldsEntry', 17),
  },
  NamespaceSpec: { finalizers: list('string', 1) },
  Namespace: { metadata: opt('ObjectMeta', 1), spec: opt('NamespaceSpec', 2) },
  Secret: { metadata: opt('ObjectMeta', 1), data: map('bytes', 2), type: opt('string', 3), stringData: map('string', 4), immutable: opt('bool', 5) },
  ConfigMap: { metadata: opt('ObjectMeta', 1), data: map('string', 2), binaryData: map('bytes', 3), immutable: opt('bool', 4) },
  PolicyRule: { verbs: list('string', 1), apiGroups: list('string', 2), resources: list('string', 3), resourceNames: list('string', 4), nonResourceURLs: list('string', 5) },
  Subject: { kind: opt('string', 1), apiGroup: opt('string', 2), name: opt('string', 3), namespace: opt('string', 4) },
  RoleRef: { apiGroup: opt('string', 1), kind: opt('string', 2), name: opt('string', 3) },
  AggregationRule: { clusterRoleSelectors: list('LabelSelector', 1) },
  LabelSelectorRequirement: { key: opt('string', 1), operator: opt('string', 2), values: list('string', 3) },
  LabelSelector: { matchLabels: map('string', 1), matchExpressions: list('LabelSelectorRequirement', 2) },
  Role: { metadata: opt('ObjectMeta', 1), rules: list('PolicyRule', 2) },
  ClusterRole: { metadata: opt('ObjectMeta', 1), rules: list('PolicyRule', 2), aggregationRule: opt('AggregationRule', 3) },
  RoleBinding: { metadata: opt('ObjectMeta', 1), subjects: list('Subject', 2), roleRef: opt('RoleRef', 3) },
  ClusterRoleBinding: { metadata: opt('ObjectMeta', 1), subjects: list('Subject', 2), roleRef: opt('RoleRef', 3) },
  Preconditions: { uid: opt('string', 1), resourceVersion: opt('string', 2) },
  ResourceAttributes: { namespace: opt('string', 1), verb: opt('string', 2), group: opt('string', 3), version: opt('string', 4), resource: opt('string', 5), subresource: opt('string', 6), name: opt('string', 7) },
  NonResourceAttributes: { path: opt('string', 1), verb: opt('string', 2) },
  SelfSubjectAccessReviewSpec: { resourceAttributes: opt('ResourceAttributes', 1), nonResourceAttributes: opt('NonResourceAttributes', 2) },
  SelfSubjectAccessReview: { metadata: opt('ObjectMeta', 1), spec: opt('SelfSubjectAccessReviewSpec', 2) },
  SelfSubjectRulesReviewSpec: { namespace: opt('string', 1) },
  SelfSubjectRulesReview: { metadata: opt('ObjectMeta', 1), spec: opt('SelfSubjectRulesReviewSpec', 2) },
  SelfSubjectReview: { metadata: opt('ObjectMeta', 1) },
  DeleteOptions: { gracePeriodSeconds: opt('int64', 1), preconditions: opt('Preconditions', 2), orphanDependents: opt('bool', 3), propagationPolicy: opt('string', 4), dryRun: list('string', 5) },
};

const root = protoRoot(MESSAGES);
const TOP_LEVEL = new Set(['Namespace', 'Secret', 'ConfigMap', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding', 'DeleteOptions', 'SelfSubjectAccessReview', 'SelfSubjectRulesReview', 'SelfSubjectReview']);
const TIME_FIELDS = new Set(['creationTimestamp', 'deletionTimestamp', 'time']);

/**
 * The JSON object a protobuf body encodes; 415 for kinds it does not know, 400 when malformed.
 * `impliedKind`: the kind the URL serves, for an envelope that names none (kube decodes into the URL's kind).
 */
export function decodeProtobuf(body: Buffer, impliedKind?: string): Record<string, unknown> {
  if (!body.subarray(0, MAGIC.length).equals(MAGIC)) throw badRequest(`a ${PROTOBUF_CONTENT_TYPE} body starts with "k8s\\0"; send JSON instead`);
  const unknown = decode('Unknown', body.subarray(MAGIC.length));
  const { apiVersion = '', kind = impliedKind ?? '' } = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  if (!TOP_LEVEL.has(kind)) {
    throw new ApiError(415, 'UnsupportedMediaType', `protobuf bodies are accepted for ${[...TOP_LEVEL].join(', ')}, not ${apiVersion} ${kind || '(no kind)'}; send it as JSON`);
  }
  const raw = Buffer.from(String(unknown.raw ?? ''), 'base64');
  return { apiVersion, kind, ...jsonForm(decode(kind, raw)) };
}

function decode(type: string, bytes: Buffer): Record<string, unknown> {
  try {
    const t = root.lookupType(type);
    return t.toObject(t.decode(bytes), { longs: Number, bytes: String, defaults: false, arrays: false, objects: false });
  } catch (err) {
    throw badRequest(`the protobuf body is not a valid ${type}: ${(err as Error).message}`);
  }
}

// Go's zero time (0001-01-01), which gogo-protobuf writes for an unset Time.
const ZERO_TIME_SECONDS = -62135596800;

// Where JSON and protobuf differ: meta/v1 Time is {seconds, nanos} (JSON: RFC 3339, whole seconds), FieldsV1 wraps raw
// JSON, and Go writes every plain string field, empty ones too, which its JSON leaves out (omitempty).
/** FieldsV1 from its protobuf form (JSON bytes); not JSON is a 400, not the 500 of a parse error. */
function fieldsV1Of(raw: string): unknown {
  try {
    return JSON.parse(Buffer.from(raw, 'base64').toString() || '{}');
  } catch {
    throw badRequest('a managedFields entry\'s fieldsV1 is not JSON; send the field set as kube encodes it');
  }
}

// A time as kube writes it; a 400 past what a Date holds (year 275760), which toISOString refuses with a RangeError.
function rfc3339(seconds: number, field: string): string {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) throw badRequest(`${field}: ${seconds} seconds is not a time this server reads`);
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function jsonForm<T>(value: T): T {
  if (Array.isArray(value)) return value.map(jsonForm) as T;
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === '') continue;
    if (TIME_FIELDS.has(k) && v && typeof v === 'object') {
      const seconds = Number((v as { seconds?: number }).seconds ?? ZERO_TIME_SECONDS);
      if (seconds > ZERO_TIME_SECONDS) out[k] = rfc3339(seconds, k);
    } else if (k === 'fieldsV1' && v && typeof v === 'object') out[k] = fieldsV1Of(String((v as { Raw?: string }).Raw ?? ''));
    else out[k] = jsonForm(v);
  }
  return out as T;
}
