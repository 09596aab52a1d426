/**
 * The etcd key layout (API.md "Storage layout"): every object lives under
 * /registry/, as in kube-apiserver.
 */
import type { ResourceDefinition } from '../resources.js';

/** The prefix of every key Cairn writes. */
export const REGISTRY_PREFIX = '/registry/';

// kube's short forms: the core group's kinds, and Leases, live right under /registry/.
const builtinPrefixes: Record<string, string> = { 'coordination.k8s.io/leases': 'leases' };

/** `/registry/<group>/<plural>/` (or kube's short forms for built-ins), ending in '/'. */
export function resourcePrefix(def: Pick<ResourceDefinition, 'group' | 'plural'>): string {
  const builtin = def.group === '' ? def.plural : builtinPrefixes[`${def.group}/${def.plural}`];
  return `${REGISTRY_PREFIX}${builtin ?? `${def.group}/${def.plural}`}/`;
}

/** The prefix holding one namespace's objects of a kind (or all of them, for cluster scope). */
export function scopePrefix(def: ResourceDefinition, namespace: string | undefined): string {
  return def.namespaced && namespace ? `${resourcePrefix(def)}${namespace}/` : resourcePrefix(def);
}

/** The key of one object. */
export function objectKey(def: ResourceDefinition, namespace: string | undefined, name: string): string {
  return def.namespaced ? `${resourcePrefix(def)}${namespace}/${name}` : `${resourcePrefix(def)}${name}`;
}

// API groups are DNS names, but for kube's two oldest.
const DOTLESS_GROUPS = new Set(['apps', 'batch']);

/** The resource a key holds, as the etcd metrics name it: `instances.cairn.dev`, or kube's short form (`leases`, `secrets`). */
export function keyResource(key: string): string {
  const [first = '', second] = key.slice(REGISTRY_PREFIX.length).split('/');
  const isGroup = first.includes('.') || DOTLESS_GROUPS.has(first);
  return !isGroup || second === undefined ? first : `${second}.${first}`;
}
