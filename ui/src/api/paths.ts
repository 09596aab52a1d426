/**
 * Where each resource lives on the API. Cairn's kinds are under
 * /apis/cairn.dev/v1alpha1; Clusters are cluster-scoped and every other
 * kind lives in its Cluster's namespace (or is listed across all of them
 * without one). Events are core v1.
 */
import { GROUP, VERSION, type ObjectMeta } from '../../../api/types';

/** The resources the dashboard reads, by URL plural. */
export type Resource = 'clusters' | 'nodes' | 'instances' | 'volumes' | 'workitems' | 'events';

/** Every object the API returns has at least this. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** A list as the API returns it. */
export interface KubeList<T> {
  metadata: { resourceVersion?: string };
  items: T[];
}

const CAIRN_PREFIX = `/apis/${GROUP}/${VERSION}`;

function prefix(resource: Resource): string {
  return resource === 'events' ? '/api/v1' : CAIRN_PREFIX;
}

/** The collection of `resource`, in `namespace` or across all of them. */
export function collectionPath(resource: Resource, namespace?: string): string {
  if (resource === 'clusters' || namespace === undefined) return `${prefix(resource)}/${resource}`;
  return `${prefix(resource)}/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

/** One object of `resource`. */
export function objectPath(resource: Resource, namespace: string | undefined, name: string): string {
  return `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`;
}

/** The followed log of an instance, starting with its last `tailLines` lines. */
export function instanceLogPath(namespace: string, name: string, tailLines = 200): string {
  return `${objectPath('instances', namespace, name)}/log?follow=true&tailLines=${tailLines}`;
}

/** The WebSocket address of a VM's serial console, on the page's own host. */
export function consoleUrl(location: { protocol: string; host: string }, namespace: string, name: string): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${objectPath('instances', namespace, name)}/console`;
}

/** A query string from defined parameters, with its leading `?` (empty when none). */
export function query(params: Record<string, string | undefined>): string {
  const defined = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
  return defined.length === 0 ? '' : `?${new URLSearchParams(defined).toString()}`;
}
