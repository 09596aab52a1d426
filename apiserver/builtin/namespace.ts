/**
 * Core v1 Namespace, a view of Clusters: in Cairn a namespace exists when its
 * Cluster exists (plus `default` and `cairn-system`). Creating one creates a
 * Cluster, patching one sets the Cluster's labels and annotations
 * (http/namespaces-handler.ts); nothing else is written through this kind.
 */
import type { JSONSchemaProps, ResourceDefinition } from '../resources.js';

const namespaceSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Namespace provides a scope for Names. In Cairn each Cluster is a namespace holding its Nodes, Instances, Volumes, WorkItems, Leases and Events.',
  properties: {
    apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object: v1.' },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents: Namespace.' },
    metadata: { type: 'object', description: "Standard object's metadata." },
    spec: {
      type: 'object',
      description: 'Spec defines the behavior of the Namespace.',
      properties: {
        finalizers: {
          type: 'array',
          description: 'Finalizers is an opaque list of values that must be empty to permanently remove object from storage.',
          items: { type: 'string', description: 'One finalizer.' },
        },
      },
    },
    status: {
      type: 'object',
      description: 'Status describes the current status of a Namespace.',
      properties: {
        phase: {
          type: 'string',
          enum: ['Active', 'Terminating'],
          description: 'Phase is the current lifecycle phase of the namespace: Active, or Terminating while its Cluster is deleted.',
        },
        conditions: {
          type: 'array',
          description: 'Represents the latest available observations of a namespace\'s current state.',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: {
            type: 'object',
            description: 'NamespaceCondition contains details about state of namespace.',
            required: ['type', 'status'],
            properties: {
              type: { type: 'string', description: 'Type of namespace controller condition.' },
              status: { type: 'string', description: 'Status of the condition, one of True, False, Unknown.' },
              lastTransitionTime: { type: 'string', format: 'date-time', description: 'Last time the condition transitioned from one status to another.' },
              reason: { type: 'string', description: 'Unique, one-word, CamelCase reason for the condition\'s last transition.' },
              message: { type: 'string', description: 'Human-readable message indicating details about last transition.' },
            },
          },
        },
      },
    },
  },
};

/** The Namespace kind of the core v1 group (a view of Clusters). */
export const namespaceDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  plural: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  shortNames: ['ns'],
  categories: [],
  hasStatus: false,
  schema: namespaceSchema,
  printerColumns: [
    { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'Active or Terminating.' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the namespace (its Cluster) was created.' },
  ],
  selectableFields: ['status.phase'],
  // Namespaces are a view of Clusters: watch clusters.cairn.dev to follow them, delete a Cluster to delete one.
  verbs: ['create', 'get', 'list', 'patch'],
};
