/**
 * SelfSubjectAccessReview (authorization.k8s.io/v1), what `kubectl auth
 * can-i` asks: may the requesting user do this? The answer comes from the
 * same authorizer chain that enforces requests, so it cannot disagree with
 * enforcement (write admission aside: a node's allowed update may still be
 * refused for what it changes, as in kube). Nothing is stored.
 *
 * A user may always review their own access, so the request listener
 * serves this without authorization (its `selfService` map). Kinds are
 * served under their own scope: a namespace given for a cluster-scoped
 * resource (kubectl sends its context's namespace for every resource) is
 * dropped, as the request itself would carry none. kubectl sends the
 * review as protobuf (protobuf.ts reads it; JSON works too), and the
 * answer is JSON, which kubectl also accepts.
 */
import type { ServerResponse } from 'node:http';
import type { RequestAttributes } from '../auth/attributes.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { UserInfo } from '../auth/user.js';
import { badRequest, invalid, type StatusCause } from '../errors.js';
import type { Registry } from '../registry.js';
import type { RequestInfo } from '../request-info.js';
import type { ResourceDefinition } from '../resources.js';
import type { ApiRequest } from './context.js';
import { decodeProtobuf, PROTOBUF_CONTENT_TYPE } from './protobuf.js';
import { checkReviewAddress } from './self-reviews.js';
import type { SelfServiceHandler } from './request-listener.js';
import { sendJson } from './respond.js';

const GROUP = 'authorization.k8s.io';
const KIND = 'SelfSubjectAccessReview';

/** The fields of the two questions, in their protobuf field order (1, 2, ...). */
const RESOURCE_FIELDS = ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'];
const PATH_FIELDS = ['path', 'verb'];

/** The `selfService` key of the handler: `<group>/<plural>`. */
export const ACCESS_REVIEW_KEY = `${GROUP}/selfsubjectaccessreviews`;

/** What a review asks about a resource (kube's ResourceAttributes). */
interface ResourceQuestion {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

/** What a review asks about a path (kube's NonResourceAttributes). */
interface PathQuestion {
  path?: string;
  verb?: string;
}

/** What a review asks: one of the two questions. */
export interface ReviewSpec {
  resourceAttributes?: ResourceQuestion;
  nonResourceAttributes?: PathQuestion;
}

const str = (description: string): { type: string; description: string } => ({ type: 'string', description });

/** The kind in discovery (create only), so `kubectl api-resources` lists it; it is never stored. */
export const selfSubjectAccessReviewDefinition: ResourceDefinition = {
  group: GROUP,
  version: 'v1',
  kind: KIND,
  listKind: `${KIND}List`,
  plural: 'selfsubjectaccessreviews',
  singular: 'selfsubjectaccessreview',
  namespaced: false,
  shortNames: [],
  categories: [],
  hasStatus: false,
  schema: {
    type: 'object',
    description: 'Asks whether the requesting user may perform an action; kubectl auth can-i sends it.',
    properties: {
      apiVersion: str('authorization.k8s.io/v1'),
      kind: str(KIND),
      metadata: { type: 'object', description: "Standard object's metadata." },
      spec: {
        type: 'object',
        description: 'The action asked about: exactly one of resourceAttributes and nonResourceAttributes.',
        properties: {
          resourceAttributes: {
            type: 'object',
            description: 'An action on a resource.',
            properties: {
              namespace: str('The namespace (Cluster); "" for all namespaces or a cluster-scoped resource.'),
              verb: str('get, list, watch, create, update, patch, delete, deletecollection, or *.'),
              group: str('The API group; "" for the core group.'),
              version: str('The API version (not used for the decision).'),
              resource: str('The resource (plural), or *.'),
              subresource: str('The subresource, such as status.'),
              name: str('The object name; "" for all.'),
            },
          },
          nonResourceAttributes: {
            type: 'object',
            description: 'An action on a non-resource path.',
            properties: { path: str('The URL path.'), verb: str('The lower-case HTTP method.') },
          },
        },
      },
      status: {
        type: 'object',
        description: 'The answer.',
        properties: {
          allowed: { type: 'boolean', description: 'Whether the action is allowed.' },
          denied: { type: 'boolean', description: 'Set when an authorizer explicitly denied it.' },
          reason: str('Why.'),
          evaluationError: str('What went wrong while deciding, if anything.'),
        },
      },
    },
  },
  printerColumns: [],
  selectableFields: [],
  verbs: ['create'],
};

/** Serves POST selfsubjectaccessreviews, deciding with `authorizer` (the chain the server enforces). */
export function accessReviewHandler(authorizer: Authorizer, registry: Pick<Registry, 'defs'>): SelfServiceHandler {
  return async (req: ApiRequest, res: ServerResponse, info: RequestInfo) => {
    checkReviewAddress(req.method ?? 'GET', info, selfSubjectAccessReviewDefinition);
    const spec = parseReviewSpec(req.body, req.headers['content-type']);
    const attrs = attributesOf(req.user, spec, registry);
    const d = await authorizer.authorize(attrs);
    // The union authorizer folds "nobody allowed it" into a denial, so `denied` (an explicit denial) is not set.
    const status = { allowed: d.decision === 'allow', ...(d.reason ? { reason: d.reason } : {}) };
    sendJson(res, 201, { apiVersion: `${GROUP}/v1`, kind: KIND, metadata: { creationTimestamp: null }, spec, status });
  };
}

/** The spec of a review sent as JSON or protobuf; throws 400 for an unreadable body and 422 for a spec asking nothing or two things. */
export function parseReviewSpec(body: Buffer | undefined, contentType: string | undefined): ReviewSpec {
  const spec = contentType?.startsWith(PROTOBUF_CONTENT_TYPE) ? protobufSpec(body) : jsonSpec(body);
  if (!isObject(spec)) throw invalid(KIND, GROUP, '', [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec' }]);
  const causes = specProblems(spec);
  if (causes.length > 0) throw invalid(KIND, GROUP, '', causes);
  return spec as ReviewSpec;
}

function specProblems(spec: Record<string, unknown>): StatusCause[] {
  const r = spec.resourceAttributes;
  const n = spec.nonResourceAttributes;
  if ((r === undefined) === (n === undefined)) {
    return [{ reason: 'FieldValueRequired', message: 'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified', field: 'spec.resourceAttributes' }];
  }
  const [field, value, keys] = r !== undefined ? ['spec.resourceAttributes', r, RESOURCE_FIELDS] : ['spec.nonResourceAttributes', n, PATH_FIELDS];
  if (!isObject(value)) return [{ reason: 'FieldValueInvalid', message: 'Invalid value: must be an object', field }];
  return keys.filter((k) => value[k] !== undefined && typeof value[k] !== 'string').map((k) => ({ reason: 'FieldValueInvalid', message: 'Invalid value: must be a string', field: `${field}.${k}` }));
}

function jsonSpec(body: Buffer | undefined): unknown {
  try {
    return (JSON.parse(body?.toString('utf8') ?? '') as { spec?: unknown } | null)?.spec;
  } catch {
    throw badRequest(`the body of a ${KIND} must be a JSON object with a spec (send Content-Type: application/json)`);
  }
}

function protobufSpec(body: Buffer | undefined): unknown {
  const review = decodeProtobuf(body ?? Buffer.alloc(0), KIND);
  if (review.kind !== KIND) throw badRequest(`expected a ${KIND}, not ${String(review.kind)}`);
  return review.spec ?? {};
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The request the review asks about, as the authorizers see it. */
export function attributesOf(user: UserInfo, spec: ReviewSpec, registry: Pick<Registry, 'defs'>): RequestAttributes {
  const n = spec.nonResourceAttributes;
  if (n) return { user, verb: n.verb ?? '', nonResourcePath: n.path ?? '' };
  const r = spec.resourceAttributes ?? {};
  const group = r.group ?? '';
  const resource = r.resource ?? '';
  const namespace = r.namespace && !isClusterScoped(registry, group, resource) ? r.namespace : undefined;
  return {
    user,
    verb: r.verb ?? '',
    resource: {
      apiGroup: group,
      resource,
      ...(r.subresource ? { subresource: r.subresource } : {}),
      ...(namespace ? { namespace } : {}),
      ...(r.name ? { name: r.name } : {}),
    },
  };
}

function isClusterScoped(registry: Pick<Registry, 'defs'>, group: string, plural: string): boolean {
  return registry.defs.some((d) => d.group === group && d.plural === plural && !d.namespaced);
}
