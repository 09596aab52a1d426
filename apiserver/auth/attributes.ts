/**
 * What a request asks to do, in the terms authorization rules are written in
 * (kube's authorizer.Attributes): the user, the verb, and the resource or
 * non-resource path it acts on.
 */
import { queryBool } from '../http/params.js';
import type { RequestInfo } from '../request-info.js';
import type { UserInfo } from './user.js';

/** One request as the authorizers see it. */
export interface RequestAttributes {
  user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection; for a non-resource path the lower-case HTTP method. */
  verb: string;
  /** Set for a resource request. */
  resource?: ResourceAttributes;
  /** Set for anything else: `/api`, `/apis/cairn.dev`, `/openapi/v3`, `/version`. */
  nonResourcePath?: string;
}

/** The resource part of a request. */
export interface ResourceAttributes {
  apiGroup: string;
  /** The plural: `instances`, `leases`. */
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** The raw selectors of a list, watch or deletecollection, as sent. */
  labelSelector?: string;
  fieldSelector?: string;
}

const VERB_OF_METHOD: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

/** The verbs that change stored state; everything else only reads. */
export const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** The attributes of a request to a resource URL. */
export function resourceAttributes(user: UserInfo, method: string, info: RequestInfo, query: Record<string, unknown>): RequestAttributes {
  const resource: ResourceAttributes = {
    apiGroup: info.group,
    resource: info.plural,
    ...(info.subresource ? { subresource: info.subresource } : {}),
    ...(info.namespace ? { namespace: info.namespace } : {}),
    ...(info.name ? { name: info.name } : {}),
    ...selectors(query),
  };
  return { user, verb: resourceVerb(method, !!info.name, query), resource };
}

/** The attributes of a request to any other path. */
export function nonResourceAttributes(user: UserInfo, method: string, path: string): RequestAttributes {
  return { user, verb: method.toLowerCase(), nonResourcePath: path };
}

/** kube's verb of a request to a resource URL: get, list, watch, create, update, patch, delete, deletecollection. */
export function resourceVerb(method: string, named: boolean, query: Record<string, unknown>): string {
  if (method === 'GET' || method === 'HEAD') return named ? 'get' : queryBool(query.watch) ? 'watch' : 'list';
  if (method === 'DELETE') return named ? 'delete' : 'deletecollection';
  return VERB_OF_METHOD[method] ?? method.toLowerCase();
}


function selectors(query: Record<string, unknown>): Pick<ResourceAttributes, 'labelSelector' | 'fieldSelector'> {
  const one = (v: unknown) => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined);
  const label = one(query.labelSelector);
  const field = one(query.fieldSelector);
  return { ...(label ? { labelSelector: label } : {}), ...(field ? { fieldSelector: field } : {}) };
}

/** `verb resource "name"` as a message names it: `create instances.cairn.dev`, `get path "/apis"`. */
export function describeRequest(a: RequestAttributes): string {
  if (!a.resource) return `${a.verb} path "${a.nonResourcePath}"`;
  const r = a.resource;
  const qualified = r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource;
  return `${a.verb} ${qualified}${r.subresource ? `/${r.subresource}` : ''}${r.name ? ` "${r.name}"` : ''}${r.namespace ? ` in namespace "${r.namespace}"` : ''}`;
}
