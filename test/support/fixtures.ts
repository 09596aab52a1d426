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
