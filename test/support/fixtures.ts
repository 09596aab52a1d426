/** Small valid objects for tests, matching crds/. */
import type { KubeObject } from '../../apiserver/storage/codec.js';

/** The URL of a namespaced Cairn collection. */
export function cairnPath(plural: string, namespace?: string, name?: string): string {
  const scope = namespace ? `/apis/cairn.dev/v1alpha1/namespaces/${namespace}/${plural}` : `/apis/cairn.dev/v1alpha1/${plural}`;
  return name ? `${scope}/${name}` : scope;
}

/** A Cluster (whose name is also a namespace). */
export function cluster(name: string): KubeObject {
  return { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name }, spec: {} };
}

/** A minimal process Instance. */
export function instance(name: string, namespace: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name, namespace },
    spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] }, ...extra },
  };
}

/** A WorkItem placed on `nodeName`, as the controller would write it. */
export function workItem(name: string, namespace: string, nodeName: string): KubeObject {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'WorkItem',
    metadata: { name, namespace },
    spec: {
      nodeName,
      type: 'InstanceRuntime',
      owner: { kind: 'Instance', name: 'owner' },
      instance: { driver: 'process', runState: 'Running', cpus: 1, memory: '16Mi', process: { command: ['/bin/true'] } },
    },
  };
}

/** The Accept header kubectl sends for Tables. */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
