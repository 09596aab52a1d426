/**
 * The escalation check on RBAC writes, pure, over hand-made policies: an author grants only what they
 * hold where the grant applies, unless they may `escalate` roles or `bind` the role.
 */
import { expect } from 'chai';
import type { RequestAttributes } from '../../../../apiserver/auth/attributes.js';
import { escalationAdmission } from '../../../../apiserver/auth/rbac-escalation.js';
import { arrayPolicy, type BindingObject, type PolicyRule, type RbacPolicy, type RoleObject } from '../../../../apiserver/auth/rbac.js';
import type { UserInfo } from '../../../../apiserver/auth/user.js';
import { ApiError } from '../../../../apiserver/errors.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';

const BOB: UserInfo = { name: 'bob', groups: ['system:authenticated'] };
const RBAC = 'rbac.authorization.k8s.io';
const ref = (kind: string, name: string) => ({ apiGroup: RBAC, kind, name });
const toBob = (name: string, roleRef: BindingObject['roleRef'], namespace?: string): BindingObject => ({ metadata: { name, ...(namespace ? { namespace } : {}) }, roleRef, subjects: [{ kind: 'User', name: 'bob' }] });

/** Bob may write RBAC objects in namespace `a` and read instances there; admin is every verb on everything. */
const delegate: RoleObject = { metadata: { name: 'delegate' }, rules: [{ verbs: ['create', 'update', 'patch'], apiGroups: [RBAC], resources: ['roles', 'rolebindings'] }, { verbs: ['get', 'list'], apiGroups: ['cairn.dev'], resources: ['instances'] }] };
const admin: RoleObject = { metadata: { name: 'admin' }, rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] };
const reader: RoleObject = { metadata: { name: 'reader' }, rules: [{ verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'] }] };

function policy(extra: { clusterRoles?: RoleObject[]; roleBindings?: BindingObject[] } = {}): RbacPolicy {
  return arrayPolicy({ clusterRoles: [delegate, admin, reader, ...(extra.clusterRoles ?? [])], roleBindings: [toBob('d', ref('ClusterRole', 'delegate'), 'a'), ...(extra.roleBindings ?? [])] });
}

/** The 403 (or undefined) of bob's `verb` of `obj` (a role or binding of `plural`). */
function refusal(p: RbacPolicy, plural: string, obj: object, verb = 'create'): ApiError | undefined {
  const meta = (obj as { metadata: { name: string; namespace?: string } }).metadata;
  const a: RequestAttributes = { user: BOB, verb, resource: { apiGroup: RBAC, resource: plural, ...(meta.namespace ? { namespace: meta.namespace } : {}) } };
  const admit = escalationAdmission(p, a)!;
  expect(admit, `${plural} writes are checked`).to.be.a('function');
  try {
    admit(undefined, obj as KubeObject);
    return undefined;
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return err as ApiError;
  }
}

const role = (name: string, namespace: string | undefined, rules: PolicyRule[]): RoleObject => ({ metadata: { name, ...(namespace ? { namespace } : {}) }, rules });

describe('RBAC escalation check', () => {
  it('refuses a binding of a role with more than its author holds (cairn:admin to oneself), naming what is not held', () => {
    const err = refusal(policy(), 'rolebindings', toBob('mine', ref('ClusterRole', 'admin'), 'a'));
    expect(err).to.include({ code: 403, reason: 'Forbidden' });
    expect(err!.message).to.match(/rolebindings\.rbac\.authorization\.k8s\.io "mine" is forbidden: user "bob" .* not currently held in namespace "a":\n\{"verbs":\["\*"\]/);
  });

  it('allows a binding of a role whose every rule the author holds in that namespace; refuses one of a missing role, as kube does', () => {
    expect(refusal(policy(), 'rolebindings', toBob('r', ref('ClusterRole', 'reader'), 'a'))).to.equal(undefined);
    expect(refusal(policy(), 'rolebindings', toBob('r', ref('ClusterRole', 'nothing'), 'a'))!.message).to.match(/ClusterRole "nothing" is not found in namespace "a"; create the role first/);
  });

  it('does not check an update that grants nothing new (a finalizer removed), as kube skips one of the collector\'s fields', () => {
    const binding = { ...toBob('mine', ref('ClusterRole', 'admin'), 'a'), metadata: { name: 'mine', namespace: 'a', finalizers: ['x'] } } as unknown as KubeObject;
    const a: RequestAttributes = { user: BOB, verb: 'update', resource: { apiGroup: RBAC, resource: 'rolebindings', namespace: 'a' } };
    const admit = escalationAdmission(policy(), a)!;
    expect(() => admit(binding, { ...binding, metadata: { name: 'mine', namespace: 'a' } })).to.not.throw();
    expect(() => admit(undefined, binding), 'a create is checked').to.throw(ApiError);
  });

  it('counts what the author holds only where the grant applies: not in another namespace', () => {
    expect(refusal(policy(), 'rolebindings', toBob('r', ref('ClusterRole', 'reader'), 'b'))).to.include({ code: 403 });
  });

  it('refuses a Role with a rule, a verb, or a star the author lacks; allows one within what they hold', () => {
    expect(refusal(policy(), 'roles', role('ok', 'a', [{ verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'] }]))).to.equal(undefined);
    expect(refusal(policy(), 'roles', role('delete', 'a', [{ verbs: ['delete'], apiGroups: ['cairn.dev'], resources: ['instances'] }]))).to.include({ code: 403 });
    expect(refusal(policy(), 'roles', role('star', 'a', [{ verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['*'] }]))).to.include({ code: 403 });
    expect(refusal(policy(), 'roles', role('secrets', 'a', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]))).to.include({ code: 403 });
  });

  it('lets an author with escalate on roles, or bind on the role, grant what they lack', () => {
    const escalate = role('esc', undefined, [{ verbs: ['escalate'], apiGroups: [RBAC], resources: ['roles'] }]);
    const bind = role('bind', undefined, [{ verbs: ['bind'], apiGroups: [RBAC], resources: ['clusterroles'], resourceNames: ['admin'] }]);
    const p = policy({ clusterRoles: [escalate, bind], roleBindings: [toBob('e', ref('ClusterRole', 'esc'), 'a'), toBob('b', ref('ClusterRole', 'bind'), 'a')] });
    expect(refusal(p, 'roles', role('all', 'a', admin.rules!))).to.equal(undefined);
    expect(refusal(p, 'rolebindings', toBob('mine', ref('ClusterRole', 'admin'), 'a'))).to.equal(undefined);
  });

  it('checks creates, updates and patches of the four kinds only', () => {
    const p = policy();
    const at = (verb: string, resource: string, apiGroup = RBAC): RequestAttributes => ({ user: BOB, verb, resource: { apiGroup, resource, namespace: 'a' } });
    for (const verb of ['create', 'update', 'patch']) for (const plural of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']) expect(escalationAdmission(p, at(verb, plural))).to.be.a('function');
    expect(escalationAdmission(p, at('delete', 'roles'))).to.equal(undefined);
    expect(escalationAdmission(p, at('create', 'instances', 'cairn.dev'))).to.equal(undefined);
  });
});
