/**
 * Kinds of Kubernetes that Cairn does not run, served as always empty so
 * that tools which list them by default work unchanged: `kubectl apply
 * --prune -l` looks up every kind of its default allowlist (Pods,
 * Deployments, Services, PersistentVolumes, ...) and fails on the first it
 * cannot find. Listing, watching and deleting work (there is never
 * anything); a write is refused with 405 and what to use instead.
 */
import type { ResourceDefinition } from '../resources.js';

const RUN_INSTEAD = 'Cairn runs no Pods or workload controllers: describe the program as an Instance (cairn.dev/v1alpha1, spec.process or spec.vm) with a restartPolicy, and the controller keeps it running on some node';
const STORE_INSTEAD = 'Cairn has no PersistentVolumes: use a Volume (cairn.dev/v1alpha1), attached through an Instance\'s spec.volumes';
const REACH_INSTEAD = 'Cairn has no Services or Ingresses: an Instance is reached at its node\'s address (status.nodeName, the Node\'s status.addresses)';

const absent = (group: string, kind: string, plural: string, shortName: string, namespaced: boolean, refusal: string): ResourceDefinition => ({
  group,
  version: 'v1',
  kind,
  listKind: `${kind}List`,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  shortNames: shortName ? [shortName] : [],
  categories: [],
  hasStatus: false,
  schema: { type: 'object', description: `${kind}: not served by Cairn (always empty). ${refusal}.`, 'x-kubernetes-preserve-unknown-fields': true },
  printerColumns: [],
  selectableFields: [],
  verbs: ['delete', 'deletecollection', 'get', 'list', 'watch'],
  refusal,
});

/** The kinds of kubectl's default prune allowlist that Cairn has no counterpart of by that name. */
export const absentKindDefinitions: ResourceDefinition[] = [
  absent('', 'Pod', 'pods', 'po', true, RUN_INSTEAD),
  absent('', 'ReplicationController', 'replicationcontrollers', 'rc', true, RUN_INSTEAD),
  absent('', 'Service', 'services', 'svc', true, REACH_INSTEAD),
  absent('', 'Endpoints', 'endpoints', 'ep', true, REACH_INSTEAD),
  absent('', 'PersistentVolumeClaim', 'persistentvolumeclaims', 'pvc', true, STORE_INSTEAD),
  absent('', 'PersistentVolume', 'persistentvolumes', 'pv', false, STORE_INSTEAD),
  absent('apps', 'Deployment', 'deployments', 'deploy', true, RUN_INSTEAD),
  absent('apps', 'DaemonSet', 'daemonsets', 'ds', true, RUN_INSTEAD),
  absent('apps', 'ReplicaSet', 'replicasets', 'rs', true, RUN_INSTEAD),
  absent('apps', 'StatefulSet', 'statefulsets', 'sts', true, RUN_INSTEAD),
  absent('batch', 'Job', 'jobs', '', true, RUN_INSTEAD),
  absent('batch', 'CronJob', 'cronjobs', 'cj', true, RUN_INSTEAD),
  absent('networking.k8s.io', 'Ingress', 'ingresses', 'ing', true, REACH_INSTEAD),
];
