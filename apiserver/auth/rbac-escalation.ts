/**
 * Kube's escalation check on RBAC writes (rbac/validation's
 * ConfirmNoEscalation), pure: a Role or ClusterRole may grant only what its
 * author holds where it applies, unless the author may `escalate` roles; a
 * binding may grant a role only when its author holds every rule of it,
 * unless the author may `bind` that role. Without it, anyone given create on
 * rolebindings (a delegated team lead) could bind cairn:admin, or a role of
 * their own making, to themselves.
 *
 * A rule is held when the author's own bindings allow each of its atoms (one
 * verb on one resource, or one path) in the same place: the role's or
 * binding's namespace, or cluster-wide for the cluster-scoped kinds. A `*`
 * is held only by a `*`.
 */
import { isDeepStrictEqual } from 'node:util';
import { RBAC_GROUP } from '../builtin/rbac.js';
import { ApiError } from '../errors.js';
import type { KubeObject } from '../storage/codec.js';
import type { RequestAttributes } from './attributes.js';
import type { WriteAdmission } from './authorizer.js';
import { boundRole, evaluate, type BindingObject, type PolicyRule, type RbacPolicy, type RoleObject } from './rbac.js';

const WRITES = new Set(['create', 'update', 'patch']);
const ROLES = new Set(['roles', 'clusterroles']);
const BINDINGS = new Set(['rolebindings', 'clusterrolebindings']);

/** The check of a write of an RBAC object that `a` asks for; undefined for any other request. */
export function escalationAdmission(policy: RbacPolicy, a: RequestAttributes): WriteAdmission | undefined {
  const r = a.resource;
  if (!r || r.apiGroup !== RBAC_GROUP || r.subresource || !WRITES.has(a.verb)) return undefined;
  // An update that grants nothing new (a finalizer or a label changed) is not checked, as kube skips one
  // that only changes the garbage collector's fields: a delegate could otherwise not let it be deleted.
  if (ROLES.has(r.resource)) return (before, after) => after && !sameGrant(before, after, ['rules']) && checkRole(policy, a, r.resource, after as RoleObject);
  if (BINDINGS.has(r.resource)) return (before, after) => after && !sameGrant(before, after, ['roleRef', 'subjects']) && checkBinding(policy, a, after as BindingObject);
  return undefined;
}

function sameGrant(before: KubeObject | undefined, after: KubeObject, fields: string[]): boolean {
  return before !== undefined && fields.every((f) => isDeepStrictEqual(before[f], after[f]));
}

function checkRole(policy: RbacPolicy, a: RequestAttributes, plural: string, role: RoleObject): void {
  const namespace = role.metadata.namespace;
  if (mayDo(policy, a, 'escalate', plural, namespace, role.metadata.name)) return;
  refuseUnheld(policy, a, role.rules ?? [], namespace, `${plural}.${RBAC_GROUP} "${role.metadata.name}"`);
}

function checkBinding(policy: RbacPolicy, a: RequestAttributes, binding: BindingObject): void {
  const ref = binding.roleRef;
  if (!ref) return;
  const namespace = binding.metadata.namespace;
  if (mayDo(policy, a, 'bind', ref.kind === 'Role' ? 'roles' : 'clusterroles', namespace, ref.name)) return;
  const role = boundRole(policy, ref, namespace);
  // As kube: a role not there (yet) cannot be checked, and would grant whatever it is made with later.
  if (!role) throw new ApiError(403, 'Forbidden', `${bindingWhat(binding)} is forbidden: ${ref.kind} "${ref.name}" is not found${namespace ? ` in namespace "${namespace}"` : ''}; create the role first, or ask an admin for the bind verb on it`);
  // Path rules grant nothing through a RoleBinding, so they are not asked of its author.
  const rules = (role.rules ?? []).filter((rule) => namespace === undefined || !rule.nonResourceURLs?.length);
  refuseUnheld(policy, a, rules, namespace, bindingWhat(binding));
}

function bindingWhat(binding: BindingObject): string {
  return `${binding.metadata.namespace ? 'rolebindings' : 'clusterrolebindings'}.${RBAC_GROUP} "${binding.metadata.name}"`;
}

function mayDo(policy: RbacPolicy, a: RequestAttributes, verb: string, plural: string, namespace: string | undefined, name: string | undefined): boolean {
  return evaluate(policy, { user: a.user, verb, resource: { apiGroup: RBAC_GROUP, resource: plural, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) } }).allowed;
}

function refuseUnheld(policy: RbacPolicy, a: RequestAttributes, rules: PolicyRule[], namespace: string | undefined, what: string): void {
  const unheld = rules.filter((rule) => atoms(rule, namespace).some((atom) => !evaluate(policy, { user: a.user, ...atom }).allowed));
  if (unheld.length === 0) return;
  const where = namespace ? ` in namespace "${namespace}"` : ' cluster-wide';
  throw new ApiError(
    403,
    'Forbidden',
    `${what} is forbidden: user "${a.user.name}" (groups=${JSON.stringify(a.user.groups)}) is attempting to grant RBAC permissions not currently held${where}:\n` +
      `${unheld.map((rule) => JSON.stringify(rule)).join('\n')}\n` +
      'Grant only what you hold, or ask an admin for the escalate verb on roles or the bind verb on this role',
  );
}

/** Each request one rule allows, as attributes (a `*` stays a `*`, which only a `*` allows). */
function atoms(rule: PolicyRule, namespace: string | undefined): Omit<RequestAttributes, 'user'>[] {
  const out: Omit<RequestAttributes, 'user'>[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const path of rule.nonResourceURLs ?? []) out.push({ verb, nonResourcePath: path });
    for (const apiGroup of rule.apiGroups ?? []) {
      for (const combined of rule.resources ?? []) {
        const [resource, subresource] = combined.split('/', 2) as [string, string | undefined];
        for (const name of rule.resourceNames?.length ? rule.resourceNames : [undefined]) {
          out.push({ verb, resource: { apiGroup, resource, ...(subresource ? { subresource } : {}), ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) } });
        }
      }
    }
  }
  return out;
}
