/**
 * The writes behind the dashboard's buttons, the same requests the CLI
 * sends (cli/run/node-ops.ts, migrate.ts, delete.ts): every imperative
 * wish is a merge patch of the object's spec or annotations, which the
 * controller then carries out.
 */
import type { Instance } from '../../../api/instance';
import { RESTARTED_AT_ANNOTATION } from '../../../api/names';
import type { Node } from '../../../api/node';
import { lastMigrationFinished } from '../state/migration';
import type { Api } from './http';
import { type KubeObject, objectPath, type Resource } from './paths';

const MERGE_PATCH = 'application/merge-patch+json';
const FIELD_MANAGER = '?fieldManager=cairn-ui';

function mergePatch<T>(api: Api, resource: Resource, o: KubeObject, patch: object): Promise<T> {
  const path = objectPath(resource, o.metadata.namespace, o.metadata.name ?? '') + FIELD_MANAGER;
  return api.json<T>('PATCH', path, { body: patch, contentType: MERGE_PATCH });
}

/** Start or stop: the instance's desired run state. */
export function setRunState(api: Api, instance: Instance, runState: 'Running' | 'Stopped'): Promise<Instance> {
  return mergePatch(api, 'instances', instance, { spec: { runState } });
}

/** Restart: a new value of the restartedAt annotation, as `kubectl rollout restart`. */
export function restartInstance(api: Api, instance: Instance, now = new Date()): Promise<Instance> {
  return mergePatch(api, 'instances', instance, { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: now.toISOString() } } });
}

/** Waits until the live copy of the instance satisfies `ready` (undefined: deleted), or rejects after a timeout. */
export type InstanceWaiter = (ready: (i: Instance | undefined) => boolean, what: string) => Promise<void>;

/**
 * Migrate: spec.migrateTo = node. Each value is carried out once, so a
 * retry towards a node whose last migration finished first clears the
 * field and waits for the controller to withdraw the old report.
 */
export async function requestMigration(api: Api, instance: Instance, node: string, waitUntil: InstanceWaiter): Promise<void> {
  if (lastMigrationFinished(instance, node)) {
    await mergePatch(api, 'instances', instance, { spec: { migrateTo: null } });
    await waitUntil((i) => !i || !lastMigrationFinished(i, node), 'the controller to withdraw the last migration report (is the controller running?)');
  }
  await mergePatch(api, 'instances', instance, { spec: { migrateTo: node } });
}

/** Cordon: no new placements on the node. */
export function cordonNode(api: Api, node: Node): Promise<Node> {
  return mergePatch(api, 'nodes', node, { spec: { unschedulable: true } });
}

/** Drain: cordoned, and every instance moved away. */
export function drainNode(api: Api, node: Node): Promise<Node> {
  return mergePatch(api, 'nodes', node, { spec: { unschedulable: true, drain: true } });
}

/** Uncordon: schedulable again, which also ends a drain. */
export function uncordonNode(api: Api, node: Node): Promise<Node> {
  return mergePatch(api, 'nodes', node, { spec: { unschedulable: false, drain: false } });
}

/** Delete; dependents are removed in the background, finalizers may keep the object a while. */
export function deleteObject(api: Api, resource: Resource, o: KubeObject): Promise<unknown> {
  const path = objectPath(resource, o.metadata.namespace, o.metadata.name ?? '');
  return api.json('DELETE', path, { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' } });
}
