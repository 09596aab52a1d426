/**
 * The etcd key layout (API.md "Storage layout"): every object lives under
 * /registry/, as in kube-apiserver.
 */
import type { ResourceDefinition } from '../resources.js';

/** The prefix of every key Cairn writes. */
export const REGISTRY_PREFIX = '/registry/';

const builtinPrefixes: Record<string, string> = {
  'coordination.k8s.io/leases': 'leases',
  '/events': 'events',
  '/namespaces': 'namespaces',
  '/secrets': 'secrets',
  '/configmaps': 'configmaps',
};

/** `/registry/<group>/<plural>/` (or kube's short forms for built-ins), ending in '/'. */
export function resourcePrefix(def: Pick<ResourceDefinition, 'group' | 'plural'>): string {
  const builtin = builtinPrefixes[`${def.group}/${def.plural}`];
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

/** The resource a key holds, as the etcd metrics name it: `instances.cairn.dev`, or kube's short form (`leases`). */
export function keyResource(key: string): string {
  const [first = '', second] = key.slice(REGISTRY_PREFIX.length).split('/');
  return Object.values(builtinPrefixes).includes(first) || second === undefined ? first : `${second}.${first}`;
}
