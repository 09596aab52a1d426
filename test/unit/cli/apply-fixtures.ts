/** A catalog like the one Cairn's apiserver serves, for the unit tests of apply, diff, delete and prune. */
import { ResourceCatalog, type ResourceInfo } from '../../../cli/client/catalog.js';
import type { Target } from '../../../cli/client/targets.js';
import type { ApiObject } from '../../../cli/client/watch.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** A served resource with defaults for the fields a test does not care about. */
export function resource(group: string, plural: string, kind: string, namespaced = true): ResourceInfo {
  const version = group === 'cairn.dev' ? 'v1alpha1' : 'v1';
  return { group, version, plural, singular: kind.toLowerCase(), kind, namespaced, shortNames: [], categories: group === 'cairn.dev' ? ['cairn'] : [], verbs: VERBS };
}

/** Cairn's five kinds, then core events and namespaces, then leases. */
export const catalog = new ResourceCatalog([
  resource('cairn.dev', 'clusters', 'Cluster', false),
  resource('cairn.dev', 'nodes', 'Node'),
  resource('cairn.dev', 'instances', 'Instance'),
  resource('cairn.dev', 'volumes', 'Volume'),
  resource('cairn.dev', 'workitems', 'WorkItem'),
  resource('', 'events', 'Event'),
  resource('', 'namespaces', 'Namespace', false),
  resource('coordination.k8s.io', 'leases', 'Lease'),
]);

/** The resource of a Cairn kind. */
export const cairn = (kind: string): ResourceInfo => catalog.forKind('cairn.dev/v1alpha1', kind)!;

/** An object of a Cairn kind. */
export function object(kind: string, name: string, namespace?: string, metadata: Record<string, unknown> = {}): ApiObject {
  return { apiVersion: 'cairn.dev/v1alpha1', kind, metadata: { name, ...(namespace ? { namespace } : {}), ...metadata } };
}

/** An applied target of a Cairn kind. */
export function target(kind: string, name: string, namespace?: string): Target {
  const r = cairn(kind);
  return { r, name, namespace: r.namespaced ? namespace : undefined, object: object(kind, name, namespace), source: 'test.yaml' };
}
