/**
 * The built-in ClusterRoles (kube's bootstrap policy), which `cairn user
 * create --role` binds:
 *   - cairn:admin: everything, including every non-resource path;
 *   - cairn:operator: everything on cairn.dev, Leases and Events, and reading
 *     Namespaces; nothing on RBAC (rbac.authorization.k8s.io) or tokens
 *     (auth.cairn.dev), so an operator cannot grant itself more;
 *   - cairn:viewer: get, list and watch of the same, never tokens or RBAC.
 * Each apiserver creates them at start when missing and puts back their
 * rules when someone changed them (unless annotated
 * `rbac.authorization.kubernetes.io/autoupdate: "false"`, as in kube).
 *
 * Concurrency: every replica, and every worker of one, runs this at start.
 * Writes go through ResourceStore's compare-and-swap; a write of unchanged
 * content is skipped, a lost create race (AlreadyExists) or conflict is
 * retried, and nothing here ever fails the start: a role still wrong after
 * the retries is logged and put right by the next start.
 */
import type { Logger } from 'winston';
import { ApiError } from '../errors.js';
import type { Registry } from '../registry.js';
import type { ResourceStore } from '../rest/resource-store.js';
import type { KubeObject } from '../storage/codec.js';
import { clusterRoleDefinition, RBAC_GROUP } from '../builtin/rbac.js';
import type { PolicyRule } from './rbac.js';

/** The label kube puts on its bootstrap roles. */
export const BOOTSTRAP_LABEL = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const READ = ['get', 'list', 'watch'];
const ATTEMPTS = 5;

const operatorRules: PolicyRule[] = [
  { apiGroups: ['cairn.dev'], resources: ['*'], verbs: ['*'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['*'] },
  { apiGroups: [''], resources: ['events', 'secrets', 'configmaps'], verbs: ['*'] },
  { apiGroups: [''], resources: ['namespaces'], verbs: READ },
];

const viewerRules: PolicyRule[] = [
  { apiGroups: ['cairn.dev'], resources: ['*'], verbs: READ },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: READ },
  // Like kube's view role: ConfigMaps but not Secrets, which would reveal credentials.
  { apiGroups: [''], resources: ['events', 'namespaces', 'configmaps'], verbs: READ },
];

/** The built-in roles by name. */
export const BOOTSTRAP_ROLES: Record<string, PolicyRule[]> = {
  'cairn:admin': [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ],
  'cairn:operator': operatorRules,
  'cairn:viewer': viewerRules,
};

/** A built-in ClusterRole as it must be stored. */
export function bootstrapRole(name: string, rules: PolicyRule[]): KubeObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: { ...BOOTSTRAP_LABEL }, annotations: { [AUTOUPDATE]: 'true' } },
    rules,
  };
}

/**
 * `current` with the built-in role's rules, label and annotation put back
 * (its other labels and annotations kept), or `current` itself when its
 * autoupdate annotation is "false".
 */
export function reconcileRole(current: KubeObject, desired: KubeObject): KubeObject {
  if (current.metadata.annotations?.[AUTOUPDATE] === 'false') return current;
  return {
    ...current,
    metadata: {
      ...current.metadata,
      labels: { ...current.metadata.labels, ...desired.metadata.labels },
      annotations: { ...current.metadata.annotations, ...desired.metadata.annotations },
    },
    rules: structuredClone(desired.rules),
  };
}

/**
 * Creates the built-in ClusterRoles when missing and restores them when
 * changed. Races and storage errors never fail it (they are logged); only a
 * registry without the RBAC kinds, a wiring mistake, throws.
 */
export async function ensureBootstrapRoles(store: ResourceStore, registry: Pick<Registry, 'find'>, log?: Logger): Promise<void> {
  const def = registry.find(RBAC_GROUP, 'v1', 'clusterroles');
  if (def !== clusterRoleDefinition) throw new Error('ensureBootstrapRoles: add rbacDefinitions (apiserver/builtin/rbac.ts) to the registry first');
  await Promise.all(
    Object.entries(BOOTSTRAP_ROLES).map(async ([name, rules]) => {
      const desired = bootstrapRole(name, rules);
      for (let attempt = 1; ; attempt++) {
        try {
          await store.update(def, undefined, name, 'main', (current) => reconcileRole(current, desired), { createIfMissing: true, dryRun: false, fieldValidation: 'Strict' });
          return;
        } catch (err) {
          // Another replica created or changed it between our read and write: read again.
          if (err instanceof ApiError && err.code === 409 && attempt < ATTEMPTS) continue;
          log?.error('could not create or restore a built-in ClusterRole; the next apiserver start retries', { role: name, error: String(err) });
          return;
        }
      }
    }),
  );
}
