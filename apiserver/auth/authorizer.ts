/**
 * Authorization: a chain of authorizers asked in order (kube's union
 * authorizer). Each allows, denies, or has no opinion; the first that
 * allows or denies decides, and a request nobody allows is forbidden.
 * An allow may carry an admission check that every write of the request
 * must pass (how the node authorizer limits which fields a node may change).
 */
import { ApiError, qualifiedResource } from '../errors.js';
import type { KubeObject } from '../storage/codec.js';
import { describeRequest, type RequestAttributes } from './attributes.js';

/**
 * Checks one write of an allowed request: `before` is the stored object
 * (undefined on create), `after` what would be stored (undefined on delete).
 * Throws an ApiError (403) to refuse it.
 */
export type WriteAdmission = (before: KubeObject | undefined, after: KubeObject | undefined) => void;

/** What an authorizer says about a request. */
export type Decision =
  | { decision: 'allow'; reason?: string; admit?: WriteAdmission }
  | { decision: 'deny'; reason: string }
  | { decision: 'noOpinion'; reason?: string };

/** One link of the chain. */
export interface Authorizer {
  authorize(a: RequestAttributes): Decision | Promise<Decision>;
}

/** The group whose members may do anything (the admin token's). */
export const MASTERS_GROUP = 'system:masters';
/** Every authenticated user is in it. */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** Members of system:masters may do anything. */
export const mastersAuthorizer: Authorizer = {
  authorize: (a) => (a.user.groups.includes(MASTERS_GROUP) ? { decision: 'allow' } : { decision: 'noOpinion' }),
};

// Discovery, OpenAPI and version are what every client reads before anything else (kube's system:discovery role).
const DISCOVERY_PATHS = [/^\/api\/?$/, /^\/api\/v1\/?$/, /^\/apis(\/[^/]+(\/[^/]+)?)?\/?$/, /^\/openapi\/v[23](\/.*)?$/, /^\/version\/?$/];

/** Lets every authenticated user read discovery, OpenAPI and the version. */
export const discoveryAuthorizer: Authorizer = {
  authorize: (a) =>
    a.nonResourcePath !== undefined && a.verb === 'get' && DISCOVERY_PATHS.some((p) => p.test(a.nonResourcePath!)) ? { decision: 'allow' } : { decision: 'noOpinion' },
};

/** Asks each authorizer in turn; the first allow or deny decides, and nobody allowing means deny. */
export class UnionAuthorizer implements Authorizer {
  constructor(private readonly chain: Authorizer[]) {}

  async authorize(a: RequestAttributes): Promise<Decision> {
    const reasons: string[] = [];
    for (const authorizer of this.chain) {
      const d = await authorizer.authorize(a);
      if (d.decision !== 'noOpinion') return d;
      if (d.reason) reasons.push(d.reason);
    }
    return { decision: 'deny', reason: reasons.join('; ') || 'no rule allows it' };
  }
}

/**
 * The 403 for a refused request, worded as kube words it so kubectl shows it
 * as usual: `instances.cairn.dev "web" is forbidden: User "bob" cannot delete
 * resource "instances" in API group "cairn.dev" in the namespace "a": <why>`.
 */
export function forbidden(a: RequestAttributes, reason: string): ApiError {
  const who = `User "${a.user.name}"`;
  const why = reason ? `: ${reason}` : '';
  if (!a.resource) {
    return new ApiError(403, 'Forbidden', `forbidden: ${who} cannot ${a.verb} path "${a.nonResourcePath}"${why}`);
  }
  const r = a.resource;
  const target = `${qualifiedResource(r.resource, r.apiGroup)}${r.name ? ` "${r.name}"` : ''}`;
  const resource = `resource "${r.resource}${r.subresource ? `/${r.subresource}` : ''}" in API group "${r.apiGroup}"`;
  const scope = r.namespace ? ` in the namespace "${r.namespace}"` : r.name ? '' : ' at the cluster scope';
  return new ApiError(403, 'Forbidden', `${target} is forbidden: ${who} cannot ${a.verb} ${resource}${scope}${why}`, {
    ...(r.name ? { name: r.name } : {}),
    group: r.apiGroup,
    kind: r.resource,
  });
}

/** The 403 an admission check throws for a write it refuses. */
export function refusedWrite(a: RequestAttributes, reason: string): ApiError {
  return new ApiError(403, 'Forbidden', `${describeRequest(a)} is forbidden for User "${a.user.name}": ${reason}`);
}
