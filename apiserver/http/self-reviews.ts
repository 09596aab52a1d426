/**
 * The two self reviews beside SelfSubjectAccessReview (access-review.ts):
 * - SelfSubjectReview (authentication.k8s.io/v1), `kubectl auth whoami`:
 *   who the server takes the requester to be (after impersonation);
 * - SelfSubjectRulesReview (authorization.k8s.io/v1), `kubectl auth can-i
 *   --list`: the rules the requester holds in a namespace, from the RBAC
 *   bindings naming them, the admin group's everything, and what every
 *   user may do (discovery, the self reviews). A node credential's rights
 *   come from the node authorizer, which is not a list of rules, so its
 *   answer says it is incomplete, as kube's does for the Node authorizer.
 * Like the access review, a user may always ask these about themselves.
 */
import type { ServerResponse } from 'node:http';
import { MASTERS_GROUP } from '../auth/authorizer.js';
import { rulesFor, type RbacPolicy, type UserRules } from '../auth/rbac.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { RequestInfo } from '../request-info.js';
import type { JSONSchemaProps, ResourceDefinition } from '../resources.js';
import { asObject, decodeBody } from './body.js';
import type { ApiRequest } from './context.js';
import type { SelfServiceHandler } from './request-listener.js';
import { sendJson } from './respond.js';

const AUTHN = 'authentication.k8s.io';
const AUTHZ = 'authorization.k8s.io';

// What kube's system:discovery and system:basic-user roles give every authenticated user.
const EVERYONE: UserRules = {
  resourceRules: [
    { verbs: ['create'], apiGroups: [AUTHZ], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
    { verbs: ['create'], apiGroups: [AUTHN], resources: ['selfsubjectreviews'] },
  ],
  nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/openapi', '/openapi/*', '/version', '/version/'] }],
};
const EVERYTHING: UserRules = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};

const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
const meta: JSONSchemaProps = { type: 'object', description: "Standard object's metadata." };

const reviewDefinition = (group: string, kind: string, description: string, properties: Record<string, JSONSchemaProps>): ResourceDefinition => ({
  group,
  version: 'v1',
  kind,
  listKind: `${kind}List`,
  plural: `${kind.toLowerCase()}s`,
  singular: kind.toLowerCase(),
  namespaced: false,
  shortNames: [],
  categories: [],
  hasStatus: false,
  schema: { type: 'object', description, properties: { apiVersion: str(`${group}/v1`), kind: str(kind), metadata: meta, ...properties } },
  printerColumns: [],
  selectableFields: [],
  verbs: ['create'],
});

/** In discovery (create only), so kubectl finds them; never stored. */
export const selfSubjectReviewDefinition = reviewDefinition(AUTHN, 'SelfSubjectReview', 'Tells the requester who the server takes them to be; kubectl auth whoami sends it.', {
  status: { type: 'object', description: 'The user the request was authenticated as.', properties: { userInfo: { type: 'object', description: 'Username and groups.' } } },
});

/** In discovery (create only), so kubectl finds them; never stored. */
export const selfSubjectRulesReviewDefinition = reviewDefinition(AUTHZ, 'SelfSubjectRulesReview', 'Lists what the requester may do in a namespace; kubectl auth can-i --list sends it.', {
  spec: { type: 'object', description: 'The namespace asked about.', properties: { namespace: str('The namespace (Cluster).') } },
  status: { type: 'object', description: 'The rules, and whether the list is complete.' },
});

/** The self-service handlers by `<group>/<plural>`, for the request listener. */
export function selfReviewHandlers(policy: RbacPolicy): Record<string, SelfServiceHandler> {
  return {
    [`${AUTHN}/selfsubjectreviews`]: async (req, res, info) => {
      checkReviewAddress(req.method ?? 'GET', info, selfSubjectReviewDefinition);
      const { name, groups } = req.user;
      send(res, selfSubjectReviewDefinition, { status: { userInfo: { username: name, groups } } });
    },
    [`${AUTHZ}/selfsubjectrulesreviews`]: async (req, res, info) => {
      checkReviewAddress(req.method ?? 'GET', info, selfSubjectRulesReviewDefinition);
      const body = req.body ? asObject(decodeBody(req.body, req.headers['content-type'])) : {};
      const namespace = typeof body.spec?.namespace === 'string' && body.spec.namespace !== '' ? (body.spec.namespace as string) : undefined;
      send(res, selfSubjectRulesReviewDefinition, { spec: { namespace: namespace ?? '' }, status: rulesStatus(policy, req, namespace) });
    },
  };
}

function rulesStatus(policy: RbacPolicy, req: ApiRequest, namespace: string | undefined): Record<string, unknown> {
  const user = req.user;
  const held = user.groups.includes(MASTERS_GROUP) ? EVERYTHING : rulesFor(policy, user, namespace);
  const status: Record<string, unknown> = {
    resourceRules: [...EVERYONE.resourceRules, ...held.resourceRules],
    nonResourceRules: [...EVERYONE.nonResourceRules, ...held.nonResourceRules],
    incomplete: !!user.node,
  };
  if (user.node) status.evaluationError = `node ${user.node.cluster}/${user.node.name} is authorized by the node authorizer (its own Node, Leases, WorkItems and what they place on it), which lists no rules`;
  return status;
}

/** Throws unless the request is a POST to the review's collection (v1, no namespace, no name): 404, or 405 for another verb. */
export function checkReviewAddress(method: string, info: RequestInfo, def: ResourceDefinition): void {
  if (info.version !== 'v1' || info.namespace !== undefined || info.name !== undefined) {
    throw new ApiError(404, 'NotFound', `the server could not find the requested resource: ${def.kind} is served only at POST /apis/${def.group}/v1/${def.plural}`);
  }
  if (method !== 'POST') throw methodNotAllowed(`${method} is not supported on ${def.plural}.${def.group}: only create (POST) is`);
}

function send(res: ServerResponse, def: ResourceDefinition, fields: Record<string, unknown>): void {
  sendJson(res, 201, { apiVersion: `${def.group}/v1`, kind: def.kind, metadata: { creationTimestamp: null }, ...fields });
}
