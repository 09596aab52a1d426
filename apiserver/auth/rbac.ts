/**
 * RBAC evaluation, pure (kube's rbac.go and rbacv1helpers): whether the
 * roles and bindings of a policy allow a request. No I/O: the policy is an
 * interface the authorizer implements over the watch cache and tests
 * implement over arrays.
 *
 * Semantics, as kube's:
 *   - ClusterRoleBindings grant their ClusterRole everywhere; a RoleBinding
 *     grants its Role (of its own namespace) or a ClusterRole only in its
 *     namespace. A namespace is a Cairn Cluster.
 *   - Subjects: User by name, Group by membership, ServiceAccount by its
 *     user name `system:serviceaccount:<ns>:<name>`.
 *   - `*` matches any verb, group, resource (subresources too) or path;
 *     `instances/status` names a subresource, and a star before `/status`
 *     that subresource of any resource; a path ending in `*` matches by
 *     prefix.
 *   - resourceNames limit a rule to requests naming one of them, so such a
 *     rule never allows list, watch, create or deletecollection.
 *   - A named request on a Cluster (`clusters.cairn.dev`) or Namespace is in
 *     that namespace, as kube treats namespaces: a RoleBinding in `a` may
 *     grant access to Cluster `a` itself, never to another.
 * There is no deny rule: a policy only adds permissions.
 *
 * Writes of roles and bindings are checked for escalation, as kube does,
 * by rbac-escalation.ts.
 */
import type { RequestAttributes, ResourceAttributes } from './attributes.js';
import type { UserInfo } from './user.js';

/** One rule of a Role or ClusterRole. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** Who a binding grants its role to. */
export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

/** The role a binding grants. */
export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

/** A Role or ClusterRole as stored. */
export interface RoleObject {
  metadata: { name?: string; namespace?: string };
  rules?: PolicyRule[];
}

/** A RoleBinding (metadata.namespace set) or ClusterRoleBinding as stored. */
export interface BindingObject {
  metadata: { name?: string; namespace?: string };
  roleRef?: RoleRef;
  subjects?: Subject[];
}

/** Where evaluation reads roles and bindings from. */
export interface RbacPolicy {
  /** Every ClusterRoleBinding. */
  clusterRoleBindings(): Iterable<BindingObject>;
  /** The RoleBindings of one namespace. */
  roleBindings(namespace: string): Iterable<BindingObject>;
  /** A Role of a namespace, or a ClusterRole when namespace is undefined. */
  role(namespace: string | undefined, name: string): RoleObject | undefined;
}

/** The outcome: allowed with the binding that allowed it, or not. */
export type RbacVerdict = { allowed: true; reason: string } | { allowed: false; reason: string };

/** Why a request no binding allows is refused. */
export const NO_RULE_REASON = 'no RBAC rule allows it';

const CLUSTER_SCOPED_NAMESPACES = new Set(['/namespaces', 'cairn.dev/clusters']);
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** Whether any binding of `policy` allows `a`. */
export function evaluate(policy: RbacPolicy, a: RequestAttributes): RbacVerdict {
  const namespace = requestNamespace(a.resource);
  for (const b of policy.clusterRoleBindings()) {
    if (grants(policy, b, undefined, a)) return allowedBy('ClusterRoleBinding', b, a.user);
  }
  if (namespace !== undefined) {
    for (const b of policy.roleBindings(namespace)) {
      if (b.metadata.namespace === namespace && grants(policy, b, namespace, a)) return allowedBy('RoleBinding', b, a.user);
    }
  }
  return { allowed: false, reason: NO_RULE_REASON };
}

/** The namespace a request acts in: its own, or for a named Cluster or Namespace, that one. */
export function requestNamespace(r: ResourceAttributes | undefined): string | undefined {
  if (!r) return undefined;
  if (r.namespace) return r.namespace;
  return r.name && CLUSTER_SCOPED_NAMESPACES.has(`${r.apiGroup}/${r.resource}`) ? r.name : undefined;
}

function grants(policy: RbacPolicy, b: BindingObject, namespace: string | undefined, a: RequestAttributes): boolean {
  if (!b.roleRef || !(b.subjects ?? []).some((s) => subjectMatches(a.user, s, namespace))) return false;
  return (boundRole(policy, b.roleRef, namespace)?.rules ?? []).some((rule) => ruleAllows(rule, a));
}

/** The role a binding refers to; a ClusterRoleBinding (no namespace) can only refer to a ClusterRole. */
export function boundRole(policy: RbacPolicy, ref: RoleRef, namespace: string | undefined): RoleObject | undefined {
  if (ref.kind === 'ClusterRole') return policy.role(undefined, ref.name);
  return ref.kind === 'Role' && namespace !== undefined ? policy.role(namespace, ref.name) : undefined;
}

function allowedBy(kind: string, b: BindingObject, user: UserInfo): RbacVerdict {
  const where = b.metadata.namespace ? `${b.metadata.namespace}/` : '';
  return { allowed: true, reason: `RBAC: allowed by ${kind} "${where}${b.metadata.name}" of ${b.roleRef!.kind} "${b.roleRef!.name}" to User "${user.name}"` };
}

/** Whether a binding subject is the user; `namespace` is the RoleBinding's (a ServiceAccount's default). */
export function subjectMatches(user: UserInfo, s: Subject, namespace?: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.name === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || namespace;
      return !!ns && user.name === `${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

/** Whether one rule allows the request. */
export function ruleAllows(rule: PolicyRule, a: RequestAttributes): boolean {
  if (!matchesOrStar(rule.verbs, a.verb)) return false;
  if (!a.resource) return pathMatches(rule.nonResourceURLs, a.nonResourcePath ?? '');
  const r = a.resource;
  return matchesOrStar(rule.apiGroups, r.apiGroup) && resourceMatches(rule.resources, r.resource, r.subresource) && nameMatches(rule.resourceNames, r.name);
}

function matchesOrStar(list: string[] | undefined, value: string): boolean {
  return (list ?? []).some((x) => x === '*' || x === value);
}

function resourceMatches(list: string[] | undefined, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (list ?? []).some((x) => x === '*' || x === combined || (!!subresource && x === `*/${subresource}`));
}

// Only a request that names its object can be limited to names; one without a name (list, create) is not allowed by such a rule.
function nameMatches(names: string[] | undefined, name: string | undefined): boolean {
  if (!names || names.length === 0) return true;
  return !!name && names.includes(name);
}

function pathMatches(urls: string[] | undefined, path: string): boolean {
  return (urls ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))));
}

/** A policy over plain arrays of objects (what a test or a snapshot holds). */
export function arrayPolicy(objects: { roles?: RoleObject[]; clusterRoles?: RoleObject[]; roleBindings?: BindingObject[]; clusterRoleBindings?: BindingObject[] }): RbacPolicy {
  return {
    clusterRoleBindings: () => objects.clusterRoleBindings ?? [],
    roleBindings: (ns) => (objects.roleBindings ?? []).filter((b) => b.metadata.namespace === ns),
    role: (ns, name) => (ns === undefined ? objects.clusterRoles : objects.roles)?.find((r) => r.metadata.name === name && (ns === undefined || r.metadata.namespace === ns)),
  };
}

/** What a user may do in one namespace, as SelfSubjectRulesReview lists it (kube's RulesFor). */
export interface UserRules {
  resourceRules: { verbs: string[]; apiGroups: string[]; resources: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs: string[] }[];
}

/** The rules of every binding of `policy` that names `user`: cluster-wide ones and those of `namespace`. */
export function rulesFor(policy: RbacPolicy, user: UserInfo, namespace: string | undefined): UserRules {
  const out: UserRules = { resourceRules: [], nonResourceRules: [] };
  const bound = [...[...policy.clusterRoleBindings()].map((b) => [b, undefined] as const), ...(namespace ? [...policy.roleBindings(namespace)].map((b) => [b, namespace] as const) : [])];
  for (const [b, ns] of bound) {
    if (!b.roleRef || !(b.subjects ?? []).some((s) => subjectMatches(user, s, ns))) continue;
    for (const r of boundRole(policy, b.roleRef, ns)?.rules ?? []) {
      const verbs = r.verbs ?? [];
      if (r.nonResourceURLs?.length) out.nonResourceRules.push({ verbs, nonResourceURLs: r.nonResourceURLs });
      if (r.resources?.length) out.resourceRules.push({ verbs, apiGroups: r.apiGroups ?? [], resources: r.resources, ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}) });
    }
  }
  return out;
}
