/**
 * RBAC, pure: rule matching (a table of kube's cases), bindings and
 * subjects, the built-in roles, the RBAC kinds' schemas, the attributes a
 * SelfSubjectAccessReview asks about, the authorizer over a hand-filled
 * cache (including its second look after the cache caught up), and
 * properties: a wider rule allows whatever a narrower one does, a grant in
 * one namespace never leaks into another, and more bindings never allow less.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import type { RequestAttributes, ResourceAttributes } from '../../../../apiserver/auth/attributes.js';
import { BOOTSTRAP_ROLES, bootstrapRole, reconcileRole } from '../../../../apiserver/auth/bootstrap-roles.js';
import { RbacAuthorizer, type RbacCache } from '../../../../apiserver/auth/rbac-authorizer.js';
import { arrayPolicy, evaluate, requestNamespace, ruleAllows, rulesFor, subjectMatches, type BindingObject, type PolicyRule, type RoleObject } from '../../../../apiserver/auth/rbac.js';
import type { UserInfo } from '../../../../apiserver/auth/user.js';
import { clusterRoleBindingDefinition, clusterRoleDefinition, rbacDefinitions, roleBindingDefinition, roleDefinition } from '../../../../apiserver/builtin/rbac.js';
import { attributesOf, parseReviewSpec, selfSubjectAccessReviewDefinition } from '../../../../apiserver/http/access-review.js';
import { ApiError } from '../../../../apiserver/errors.js';
import { loadCrds } from '../../../../apiserver/crd-loader.js';
import { Registry } from '../../../../apiserver/registry.js';
import type { ResourceDefinition } from '../../../../apiserver/resources.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { objectKey, resourcePrefix } from '../../../../apiserver/storage/keys.js';
import { ResourceCache } from '../../../../apiserver/storage/resource-cache.js';
import { CRD_DIR } from '../../../support/paths.js';

const ALICE: UserInfo = { name: 'alice', groups: ['ops', 'system:authenticated'] };
const res = (verb: string, r: Partial<ResourceAttributes> & { resource: string }, user = ALICE): RequestAttributes => ({ user, verb, resource: { apiGroup: 'cairn.dev', ...r } });
const path = (verb: string, p: string, user = ALICE): RequestAttributes => ({ user, verb, nonResourcePath: p });

describe('RBAC evaluation', () => {
  describe('one rule', () => {
    const cases: [string, PolicyRule, RequestAttributes, boolean][] = [
      ['exact verb, group, resource', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'] }, res('get', { resource: 'instances', name: 'web' }), true],
      ['another verb', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'] }, res('delete', { resource: 'instances', name: 'web' }), false],
      ['another group', { verbs: ['get'], apiGroups: [''], resources: ['instances'] }, res('get', { resource: 'instances' }), false],
      ['another resource', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['volumes'] }, res('get', { resource: 'instances' }), false],
      ['verb *', { verbs: ['*'], apiGroups: ['cairn.dev'], resources: ['instances'] }, res('deletecollection', { resource: 'instances' }), true],
      ['group *', { verbs: ['get'], apiGroups: ['*'], resources: ['leases'] }, res('get', { apiGroup: 'coordination.k8s.io', resource: 'leases' }), true],
      ['resource * covers subresources', { verbs: ['update'], apiGroups: ['cairn.dev'], resources: ['*'] }, res('update', { resource: 'instances', subresource: 'status', name: 'w' }), true],
      ['core group ""', { verbs: ['list'], apiGroups: [''], resources: ['events'] }, res('list', { apiGroup: '', resource: 'events' }), true],
      ['core rule does not match cairn.dev', { verbs: ['list'], apiGroups: [''], resources: ['events'] }, res('list', { resource: 'events' }), false],
      ['resource does not cover its subresource', { verbs: ['update'], apiGroups: ['cairn.dev'], resources: ['instances'] }, res('update', { resource: 'instances', subresource: 'status', name: 'w' }), false],
      ['resource/subresource', { verbs: ['update'], apiGroups: ['cairn.dev'], resources: ['instances/status'] }, res('update', { resource: 'instances', subresource: 'status', name: 'w' }), true],
      ['resource/subresource is not the resource', { verbs: ['update'], apiGroups: ['cairn.dev'], resources: ['instances/status'] }, res('update', { resource: 'instances', name: 'w' }), false],
      ['*/subresource', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['*/status'] }, res('get', { resource: 'nodes', subresource: 'status', name: 'n' }), true],
      ['*/subresource is only that subresource', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['*/status'] }, res('get', { resource: 'nodes', subresource: 'scale', name: 'n' }), false],
      ['*/subresource is not the resource', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['*/status'] }, res('get', { resource: 'nodes', name: 'n' }), false],
      ['*/x does not match a longer subresource', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['*/status'] }, res('get', { resource: 'nodes', subresource: 'xstatus', name: 'n' }), false],
      ['resourceNames: named', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'], resourceNames: ['web'] }, res('get', { resource: 'instances', name: 'web' }), true],
      ['resourceNames: another name', { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'], resourceNames: ['web'] }, res('get', { resource: 'instances', name: 'db' }), false],
      ['resourceNames never allow list', { verbs: ['list'], apiGroups: ['cairn.dev'], resources: ['instances'], resourceNames: ['web'] }, res('list', { resource: 'instances' }), false],
      ['resourceNames never allow watch', { verbs: ['watch'], apiGroups: ['cairn.dev'], resources: ['instances'], resourceNames: ['web'] }, res('watch', { resource: 'instances' }), false],
      ['resourceNames never allow create', { verbs: ['create'], apiGroups: ['cairn.dev'], resources: ['instances'], resourceNames: ['web'] }, res('create', { resource: 'instances' }), false],
      ['resourceNames never allow deletecollection', { verbs: ['deletecollection'], apiGroups: ['cairn.dev'], resources: ['instances'], resourceNames: ['web'] }, res('deletecollection', { resource: 'instances' }), false],
      ['empty resourceNames allow list', { verbs: ['list'], apiGroups: ['cairn.dev'], resources: ['instances'], resourceNames: [] }, res('list', { resource: 'instances' }), true],
      ['resourceNames apply to subresources', { verbs: ['update'], apiGroups: ['cairn.dev'], resources: ['instances/status'], resourceNames: ['web'] }, res('update', { resource: 'instances', subresource: 'status', name: 'web' }), true],
      ['no verbs allow nothing', { apiGroups: ['*'], resources: ['*'] }, res('get', { resource: 'instances' }), false],
      ['no apiGroups allow nothing', { verbs: ['*'], resources: ['*'] }, res('get', { resource: 'instances' }), false],
      ['a resource rule allows no path', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, path('get', '/healthz'), false],
      ['a path rule allows no resource', { verbs: ['*'], nonResourceURLs: ['*'] }, res('get', { resource: 'instances' }), false],
      ['exact path', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, path('get', '/healthz'), true],
      ['another path', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, path('get', '/healthz/etcd'), false],
      ['path *', { verbs: ['get'], nonResourceURLs: ['*'] }, path('get', '/anything/at/all'), true],
      ['path prefix*', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, path('get', '/healthz/etcd'), true],
      ['path prefix* is a prefix, not a segment', { verbs: ['get'], nonResourceURLs: ['/health*'] }, path('get', '/healthz'), true],
      ['path prefix* does not match elsewhere', { verbs: ['get'], nonResourceURLs: ['/healthz/*'] }, path('get', '/readyz'), false],
      ['path verb', { verbs: ['get'], nonResourceURLs: ['/cairn/v1/rotate'] }, path('post', '/cairn/v1/rotate'), false],
    ];
    for (const [label, rule, a, allowed] of cases) {
      it(`${label}: ${allowed ? 'allows' : 'does not allow'}`, () => expect(ruleAllows(rule, a)).to.equal(allowed));
    }
  });

  describe('subjects', () => {
    const sa: UserInfo = { name: 'system:serviceaccount:a:builder', groups: [] };
    const cases: [string, UserInfo, { kind: string; name: string; namespace?: string }, string | undefined, boolean][] = [
      ['User by name', ALICE, { kind: 'User', name: 'alice' }, undefined, true],
      ['another User', ALICE, { kind: 'User', name: 'bob' }, undefined, false],
      ['Group by membership', ALICE, { kind: 'Group', name: 'ops' }, undefined, true],
      ['system:authenticated', ALICE, { kind: 'Group', name: 'system:authenticated' }, undefined, true],
      ['a Group named like the user', ALICE, { kind: 'Group', name: 'alice' }, undefined, false],
      ['a User named like a group', ALICE, { kind: 'User', name: 'ops' }, undefined, false],
      ['ServiceAccount with namespace', sa, { kind: 'ServiceAccount', name: 'builder', namespace: 'a' }, undefined, true],
      ['ServiceAccount in the binding namespace', sa, { kind: 'ServiceAccount', name: 'builder' }, 'a', true],
      ['ServiceAccount of another namespace', sa, { kind: 'ServiceAccount', name: 'builder' }, 'b', false],
      ['ServiceAccount without any namespace', sa, { kind: 'ServiceAccount', name: 'builder' }, undefined, false],
      ['unknown kind', ALICE, { kind: 'Robot', name: 'alice' }, undefined, false],
    ];
    for (const [label, user, subject, ns, matches] of cases) {
      it(`${label}: ${matches ? 'matches' : 'does not match'}`, () => expect(subjectMatches(user, subject, ns)).to.equal(matches));
    }
  });

  describe('bindings', () => {
    const writer: RoleObject = { metadata: { name: 'writer' }, rules: [{ verbs: ['*'], apiGroups: ['cairn.dev'], resources: ['*'] }] };
    const localReader: RoleObject = { metadata: { name: 'reader', namespace: 'a' }, rules: [{ verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'] }] };
    const bind = (ref: { kind: string; name: string }, namespace?: string, subject = { kind: 'User', name: 'alice' }): BindingObject => ({
      metadata: { name: `b-${ref.name}`, ...(namespace ? { namespace } : {}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...ref },
      subjects: [subject],
    });
    const allowed = (bindings: { roleBindings?: BindingObject[]; clusterRoleBindings?: BindingObject[] }, a: RequestAttributes) =>
      evaluate(arrayPolicy({ clusterRoles: [writer], roles: [localReader], ...bindings }), a).allowed;

    it('rulesFor lists the rules of the bindings naming the user: cluster-wide, and those of the namespace asked about only', () => {
      const paths: RoleObject = { metadata: { name: 'paths' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }, { verbs: ['get'], apiGroups: [''], resources: ['events'], resourceNames: ['e1'] }] };
      const policy = arrayPolicy({
        clusterRoles: [writer, paths],
        roles: [localReader],
        clusterRoleBindings: [bind({ kind: 'ClusterRole', name: 'paths' }), bind({ kind: 'ClusterRole', name: 'writer' }, undefined, { kind: 'User', name: 'bob' })],
        roleBindings: [bind({ kind: 'Role', name: 'reader' }, 'a'), bind({ kind: 'ClusterRole', name: 'writer' }, 'b', { kind: 'Group', name: 'ops' })],
      });
      const cluster = { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['events'], resourceNames: ['e1'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] };
      expect(rulesFor(policy, ALICE, undefined)).to.deep.equal(cluster);
      expect(rulesFor(policy, ALICE, 'a').resourceRules).to.deep.equal([...cluster.resourceRules, { verbs: ['get'], apiGroups: ['cairn.dev'], resources: ['instances'] }]);
      expect(rulesFor(policy, ALICE, 'b').resourceRules).to.deep.equal([...cluster.resourceRules, { verbs: ['*'], apiGroups: ['cairn.dev'], resources: ['*'] }]);
      expect(rulesFor(policy, { name: 'carol', groups: [] }, 'a')).to.deep.equal({ resourceRules: [], nonResourceRules: [] });
    });

    it('a ClusterRoleBinding grants in every namespace and at the cluster scope', () => {
      const crb = { clusterRoleBindings: [bind({ kind: 'ClusterRole', name: 'writer' })] };
      for (const r of [{ namespace: 'a' }, { namespace: 'b' }, {}]) expect(allowed(crb, res('create', { resource: 'instances', ...r }))).to.equal(true);
      expect(allowed(crb, res('create', { resource: 'clusters' }))).to.equal(true);
    });
    it('a RoleBinding to a ClusterRole grants only in its namespace', () => {
      const rb = { roleBindings: [bind({ kind: 'ClusterRole', name: 'writer' }, 'a')] };
      expect(allowed(rb, res('delete', { resource: 'instances', namespace: 'a', name: 'w' }))).to.equal(true);
      expect(allowed(rb, res('delete', { resource: 'instances', namespace: 'b', name: 'w' }))).to.equal(false);
      expect(allowed(rb, res('list', { resource: 'instances' })), 'list across namespaces').to.equal(false);
      expect(allowed(rb, res('create', { resource: 'clusters' })), 'create a Cluster').to.equal(false);
    });
    it('a RoleBinding in a namespace reaches that Cluster (and Namespace) object, as kube treats namespaces', () => {
      const rb = { roleBindings: [bind({ kind: 'ClusterRole', name: 'writer' }, 'a')] };
      expect(allowed(rb, res('patch', { resource: 'clusters', name: 'a' }))).to.equal(true);
      expect(allowed(rb, res('patch', { resource: 'clusters', name: 'b' }))).to.equal(false);
      expect(requestNamespace({ apiGroup: '', resource: 'namespaces', name: 'a' })).to.equal('a');
      expect(requestNamespace({ apiGroup: 'cairn.dev', resource: 'nodes', name: 'a' })).to.equal(undefined);
    });
    it('a RoleBinding to a Role uses the Role of its own namespace', () => {
      expect(allowed({ roleBindings: [bind({ kind: 'Role', name: 'reader' }, 'a')] }, res('get', { resource: 'instances', namespace: 'a', name: 'w' }))).to.equal(true);
      expect(allowed({ roleBindings: [bind({ kind: 'Role', name: 'reader' }, 'b')] }, res('get', { resource: 'instances', namespace: 'b', name: 'w' })), 'no Role reader in b').to.equal(false);
    });
    it('a ClusterRoleBinding cannot grant a Role', () => {
      expect(allowed({ clusterRoleBindings: [bind({ kind: 'Role', name: 'reader' })] }, res('get', { resource: 'instances', namespace: 'a', name: 'w' }))).to.equal(false);
    });
    it('a binding to a missing role grants nothing', () => {
      expect(allowed({ clusterRoleBindings: [bind({ kind: 'ClusterRole', name: 'ghost' })] }, res('get', { resource: 'instances' }))).to.equal(false);
    });
    it('binds by group, and not to other users', () => {
      const byGroup = { clusterRoleBindings: [bind({ kind: 'ClusterRole', name: 'writer' }, undefined, { kind: 'Group', name: 'ops' })] };
      expect(allowed(byGroup, res('get', { resource: 'instances' }))).to.equal(true);
      expect(allowed(byGroup, res('get', { resource: 'instances' }, { name: 'bob', groups: ['devs'] }))).to.equal(false);
    });
    it('a binding without subjects grants nothing', () => {
      expect(allowed({ clusterRoleBindings: [{ ...bind({ kind: 'ClusterRole', name: 'writer' }), subjects: undefined }] }, res('get', { resource: 'instances' }))).to.equal(false);
    });
    it('says which binding allowed it, and why not when none did', () => {
      const v = evaluate(arrayPolicy({ clusterRoles: [writer], roleBindings: [bind({ kind: 'ClusterRole', name: 'writer' }, 'a')] }), res('get', { resource: 'instances', namespace: 'a' }));
      expect(v).to.deep.equal({ allowed: true, reason: 'RBAC: allowed by RoleBinding "a/b-writer" of ClusterRole "writer" to User "alice"' });
      expect(evaluate(arrayPolicy({}), res('get', { resource: 'instances' }))).to.deep.equal({ allowed: false, reason: 'no RBAC rule allows it' });
    });
  });

  describe('built-in roles', () => {
    const can = (role: string, verb: string, apiGroup: string, resource: string, subresource?: string) =>
      BOOTSTRAP_ROLES[role]!.some((rule) => ruleAllows(rule, res(verb, { apiGroup, resource, namespace: 'a', name: 'x', ...(subresource ? { subresource } : {}) })));
    const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];
    const CAIRN = ['clusters', 'nodes', 'instances', 'volumes', 'workitems'];

    it('cairn:admin may do anything, on any path', () => {
      expect(can('cairn:admin', 'escalate', 'rbac.authorization.k8s.io', 'clusterroles')).to.equal(true);
      expect(can('cairn:admin', 'delete', 'auth.cairn.dev', 'tokens')).to.equal(true);
      expect(BOOTSTRAP_ROLES['cairn:admin']!.some((rule) => ruleAllows(rule, path('post', '/cairn/v1/anything')))).to.equal(true);
    });
    it('cairn:operator writes Cairn kinds, leases and events, reads namespaces, and touches neither RBAC nor tokens', () => {
      for (const r of CAIRN) for (const v of [...WRITES, 'get', 'list', 'watch']) expect(can('cairn:operator', v, 'cairn.dev', r), `${v} ${r}`).to.equal(true);
      expect(can('cairn:operator', 'update', 'cairn.dev', 'instances', 'status')).to.equal(true);
      for (const v of WRITES) expect(can('cairn:operator', v, 'coordination.k8s.io', 'leases') && can('cairn:operator', v, '', 'events')).to.equal(true);
      expect(can('cairn:operator', 'get', '', 'namespaces') && !can('cairn:operator', 'delete', '', 'namespaces')).to.equal(true);
      for (const v of ['get', 'list', 'create', 'delete', 'bind', 'escalate']) {
        for (const r of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']) expect(can('cairn:operator', v, 'rbac.authorization.k8s.io', r), `${v} ${r}`).to.equal(false);
        expect(can('cairn:operator', v, 'auth.cairn.dev', 'tokens'), `${v} tokens`).to.equal(false);
      }
    });
    it('cairn:viewer reads and never writes, and reads no tokens or RBAC', () => {
      for (const r of CAIRN) {
        for (const v of ['get', 'list', 'watch']) expect(can('cairn:viewer', v, 'cairn.dev', r)).to.equal(true);
        for (const v of WRITES) expect(can('cairn:viewer', v, 'cairn.dev', r), `${v} ${r}`).to.equal(false);
      }
      for (const [g, r] of [['', 'events'], ['', 'namespaces'], ['coordination.k8s.io', 'leases']] as const) {
        expect(can('cairn:viewer', 'list', g, r)).to.equal(true);
        for (const v of WRITES) expect(can('cairn:viewer', v, g, r)).to.equal(false);
      }
      expect(can('cairn:viewer', 'get', 'auth.cairn.dev', 'tokens') || can('cairn:viewer', 'list', 'rbac.authorization.k8s.io', 'rolebindings')).to.equal(false);
    });
    it('restores changed rules and the label, keeping other metadata, unless autoupdate is "false"', () => {
      const desired = bootstrapRole('cairn:viewer', BOOTSTRAP_ROLES['cairn:viewer']!);
      const tampered: KubeObject = { ...desired, metadata: { name: 'cairn:viewer', uid: 'u1', labels: { team: 'x' } }, rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] };
      const fixed = reconcileRole(tampered, desired);
      expect(fixed.rules).to.deep.equal(desired.rules);
      expect(fixed.metadata).to.deep.include({ uid: 'u1', labels: { team: 'x', 'kubernetes.io/bootstrapping': 'rbac-defaults' } });
      const pinned = { ...tampered, metadata: { ...tampered.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } } };
      expect(reconcileRole(pinned, desired)).to.equal(pinned);
    });
  });

  describe('schemas', () => {
    const registry = new Registry([...rbacDefinitions]);
    const problems = (def: ResourceDefinition, obj: Record<string, unknown>) => registry.validator(def)({ metadata: { name: 'x' }, ...obj }).map((c) => c.field);
    const ref = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cairn:viewer' };

    it('accepts kube-shaped objects', () => {
      expect(problems(roleDefinition, { rules: [{ apiGroups: [''], resources: ['events'], verbs: ['get'], resourceNames: ['e'] }] })).to.deep.equal([]);
      expect(problems(clusterRoleDefinition, { rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }, { apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] })).to.deep.equal([]);
      expect(problems(roleBindingDefinition, { roleRef: ref, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] })).to.deep.equal([]);
      expect(problems(clusterRoleBindingDefinition, { roleRef: ref, subjects: [{ kind: 'ServiceAccount', name: 'b', namespace: 'a' }] })).to.deep.equal([]);
    });
    it('refuses rules without verbs, groups or resources, and rules mixing resources and paths', () => {
      expect(problems(roleDefinition, { rules: [{ apiGroups: [''], resources: ['events'] }] })).to.include('rules[0].verbs');
      expect(problems(roleDefinition, { rules: [{ resources: ['events'], verbs: ['get'] }] })).to.include('rules[0].apiGroups');
      expect(problems(roleDefinition, { rules: [{ apiGroups: [''], resources: ['events'], verbs: [] }] })).to.include('rules[0].verbs');
      expect(problems(clusterRoleDefinition, { rules: [{ verbs: ['get'] }] })).to.not.deep.equal([]);
      expect(problems(clusterRoleDefinition, { rules: [{ verbs: ['get'], nonResourceURLs: ['/x'], resources: ['events'], apiGroups: [''] }] })).to.not.deep.equal([]);
    });
    it('refuses bindings without roleRef, or with a wrong role kind or subject kind', () => {
      expect(problems(roleBindingDefinition, {})).to.include('roleRef');
      expect(problems(clusterRoleBindingDefinition, { roleRef: { ...ref, kind: 'Role' } })).to.include('roleRef.kind');
      expect(problems(roleBindingDefinition, { roleRef: { ...ref, apiGroup: 'cairn.dev' } })).to.include('roleRef.apiGroup');
      expect(problems(roleBindingDefinition, { roleRef: ref, subjects: [{ kind: 'Robot', name: 'r' }] })).to.include('subjects[0].kind');
      expect(problems(roleBindingDefinition, { roleRef: ref, subjects: [{ kind: 'User' }] })).to.include('subjects[0].name');
    });
  });

  describe('SelfSubjectAccessReview attributes', () => {
    const registry = new Registry([...loadCrds(CRD_DIR), ...rbacDefinitions, selfSubjectAccessReviewDefinition]);
    it('keeps the namespace of a namespaced resource and drops it for a cluster-scoped one', () => {
      const ask = (resource: string, group = 'cairn.dev') => attributesOf(ALICE, { resourceAttributes: { namespace: 'a', verb: 'get', group, resource, name: 'n' } }, registry).resource;
      expect(ask('instances')).to.deep.equal({ apiGroup: 'cairn.dev', resource: 'instances', namespace: 'a', name: 'n' });
      expect(ask('clusters')).to.deep.equal({ apiGroup: 'cairn.dev', resource: 'clusters', name: 'n' });
      expect(ask('clusterroles', 'rbac.authorization.k8s.io')).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'n' });
    });
    it('reads the protobuf kubectl sends, and refuses a malformed one with a 400', () => {
      const PROTOBUF = 'application/vnd.kubernetes.protobuf';
      const field = (n: number, body: Buffer | string) => {
        const b = Buffer.from(body);
        return Buffer.concat([Buffer.from([(n << 3) | 2, b.length]), b]);
      };
      const attrs = Buffer.concat([field(1, 'a'), field(2, 'delete'), field(3, 'cairn.dev'), field(5, 'instances'), field(7, 'web'), Buffer.from([0x40, 0x01])]);
      const review = Buffer.concat([field(1, ''), field(2, field(1, attrs)), field(3, '')]);
      const envelope = Buffer.concat([Buffer.from('k8s\0', 'latin1'), field(1, Buffer.concat([field(1, 'authorization.k8s.io/v1'), field(2, 'SelfSubjectAccessReview')])), field(2, review)]);
      expect(parseReviewSpec(envelope, PROTOBUF)).to.deep.equal({ resourceAttributes: { namespace: 'a', verb: 'delete', group: 'cairn.dev', resource: 'instances', name: 'web' } });
      const paths = Buffer.concat([Buffer.from('k8s\0', 'latin1'), field(2, field(2, field(2, Buffer.concat([field(1, '/apis'), field(2, 'get')]))))]);
      expect(parseReviewSpec(paths, PROTOBUF)).to.deep.equal({ nonResourceAttributes: { path: '/apis', verb: 'get' } });
      const code = (body: Buffer, type?: string) => {
        try {
          parseReviewSpec(body, type);
          return 0;
        } catch (err) {
          return (err as ApiError).code;
        }
      };
      expect(code(envelope.subarray(0, envelope.length - 3), PROTOBUF), 'truncated').to.equal(400);
      expect(code(Buffer.from('not protobuf'), PROTOBUF), 'no envelope').to.equal(400);
      expect(code(Buffer.from('{"spec":'), 'application/json'), 'bad JSON').to.equal(400);
      expect(code(Buffer.from('{"spec":{}}'), 'application/json'), 'asks nothing').to.equal(422);
    });
    it('asks about paths', () => {
      expect(attributesOf(ALICE, { nonResourceAttributes: { path: '/healthz', verb: 'get' } }, registry)).to.deep.equal(path('get', '/healthz'));
    });
  });

  describe('the authorizer over the watch cache', () => {
    class FakeCache implements RbacCache {
      readonly caches = new Map<ResourceDefinition, ResourceCache>();
      lagging: [ResourceDefinition, KubeObject][] = [];
      forResource(d: ResourceDefinition): ResourceCache {
        let c = this.caches.get(d);
        if (!c) this.caches.set(d, (c = new ResourceCache(d, resourcePrefix(d), 10)));
        return c;
      }
      put(d: ResourceDefinition, obj: KubeObject): void {
        this.forResource(d).apply({ type: 'put', key: objectKey(d, obj.metadata.namespace, obj.metadata.name!), obj, rev: 1, prev: null });
      }
      async waitFresh(): Promise<boolean> {
        for (const [d, o] of this.lagging.splice(0)) this.put(d, o);
        return true;
      }
    }
    const viewerBinding = (ns: string): KubeObject => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-viewer', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cairn:viewer' },
      subjects: [{ kind: 'User', name: 'alice' }],
    });

    it('allows what the cached bindings allow and has no opinion on the rest', async () => {
      const cache = new FakeCache();
      cache.put(clusterRoleDefinition, bootstrapRole('cairn:viewer', BOOTSTRAP_ROLES['cairn:viewer']!));
      cache.put(roleBindingDefinition, viewerBinding('a'));
      const authz = new RbacAuthorizer(cache);
      expect(await authz.authorize(res('list', { resource: 'instances', namespace: 'a' }))).to.include({ decision: 'allow' });
      expect(await authz.authorize(res('list', { resource: 'instances', namespace: 'b' }))).to.deep.equal({ decision: 'noOpinion', reason: 'no RBAC rule allows it' });
    });
    it('looks again once the cache caught up before refusing', async () => {
      const cache = new FakeCache();
      cache.put(clusterRoleDefinition, bootstrapRole('cairn:viewer', BOOTSTRAP_ROLES['cairn:viewer']!));
      cache.lagging.push([roleBindingDefinition, viewerBinding('a')]);
      expect(await new RbacAuthorizer(cache).authorize(res('get', { resource: 'instances', namespace: 'a', name: 'w' }))).to.include({ decision: 'allow' });
    });
  });

  describe('properties', () => {
    const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
    const verb = fc.constantFrom(...VERBS);
    const group = fc.constantFrom('', 'cairn.dev', 'coordination.k8s.io', 'auth.cairn.dev');
    const resource = fc.constantFrom('instances', 'nodes', 'events', 'leases', 'tokens', 'clusters');
    const subresource = fc.option(fc.constantFrom('status', 'scale'), { nil: undefined });
    const name = fc.option(fc.constantFrom('web', 'db', 'a'), { nil: undefined });
    const namespace = fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined });
    const request = fc.record({ verb, apiGroup: group, resource, subresource, name, namespace }).map(({ verb: v, subresource: s, name: n, namespace: ns, ...r }) =>
      res(v, { ...r, ...(s ? { subresource: s } : {}), ...(n ? { name: n } : {}), ...(ns ? { namespace: ns } : {}) }),
    );
    const listOf = <T>(a: fc.Arbitrary<T>) => fc.array(a, { minLength: 1, maxLength: 3 });
    const rule: fc.Arbitrary<PolicyRule> = fc.record({
      verbs: listOf(fc.oneof(verb, fc.constant('*'))),
      apiGroups: listOf(fc.oneof(group, fc.constant('*'))),
      resources: listOf(fc.oneof(resource, fc.constant('*'), resource.chain((r) => fc.constantFrom(`${r}/status`, '*/status')))),
      resourceNames: fc.option(fc.array(fc.constantFrom('web', 'db', 'a'), { maxLength: 2 }), { nil: undefined }),
    });

    it('a rule widened with * (or without resourceNames) allows whatever the rule allows', () => {
      fc.assert(
        fc.property(rule, request, fc.constantFrom('verbs', 'apiGroups', 'resources', 'resourceNames'), (r, a, field) => {
          fc.pre(ruleAllows(r, a));
          const wider = field === 'resourceNames' ? { ...r, resourceNames: undefined } : { ...r, [field]: ['*'] };
          expect(ruleAllows(wider, a)).to.equal(true);
        }),
        { numRuns: 2000 },
      );
    });
    it('a RoleBinding grants nothing outside its namespace', () => {
      fc.assert(
        fc.property(listOf(rule), fc.constantFrom('a', 'b'), request, (rules, bindingNs, a) => {
          const policy = arrayPolicy({
            clusterRoles: [{ metadata: { name: 'r' }, rules }],
            roleBindings: [{ metadata: { name: 'rb', namespace: bindingNs }, roleRef: { kind: 'ClusterRole', name: 'r' }, subjects: [{ kind: 'User', name: 'alice' }] }],
          });
          if (evaluate(policy, a).allowed) expect(requestNamespace(a.resource)).to.equal(bindingNs);
        }),
        { numRuns: 1000 },
      );
    });
    it('more bindings never allow less, and a ClusterRoleBinding allows whatever a RoleBinding of the same role does', () => {
      fc.assert(
        fc.property(listOf(rule), namespace, request, (rules, ns, a) => {
          const clusterRoles = [{ metadata: { name: 'r' }, rules }];
          const subjects = [{ kind: 'User', name: 'alice' }];
          const rb = { metadata: { name: 'rb', namespace: ns ?? 'a' }, roleRef: { kind: 'ClusterRole', name: 'r' }, subjects };
          const crb = { metadata: { name: 'crb' }, roleRef: { kind: 'ClusterRole', name: 'r' }, subjects };
          const narrow = evaluate(arrayPolicy({ clusterRoles, roleBindings: [rb] }), a).allowed;
          if (narrow) {
            expect(evaluate(arrayPolicy({ clusterRoles, roleBindings: [rb], clusterRoleBindings: [crb] }), a).allowed).to.equal(true);
            expect(evaluate(arrayPolicy({ clusterRoles, clusterRoleBindings: [crb] }), a).allowed).to.equal(true);
          }
        }),
        { numRuns: 1000 },
      );
    });
  });
});
