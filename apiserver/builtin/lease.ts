/**
 * coordination.k8s.io/v1 Lease as kube-apiserver serves it: namespaced, no
 * status subresource. Cairn uses it for controller leader election, node
 * heartbeats (<cluster>/node-<name>) and instance fencing
 * (<cluster>/instance-<name>).
 */
import { ALL_VERBS, type JSONSchemaProps, type ResourceDefinition } from '../resources.js';

// Go's decoder treats JSON null as "unset" for pointer fields; client-go sends nulls, so accept them.
const microTime = (description: string): JSONSchemaProps => ({ type: 'string', format: 'date-time', nullable: true, description });
const int32 = (description: string): JSONSchemaProps => ({ type: 'integer', format: 'int32', nullable: true, description });

const leaseSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Lease defines a lease concept: a time-bounded claim of one holder on a resource.',
  properties: {
    apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object: coordination.k8s.io/v1.' },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents: Lease.' },
    metadata: { type: 'object', description: "Standard object's metadata." },
    spec: {
      type: 'object',
      description: 'spec contains the specification of the Lease.',
      properties: {
        holderIdentity: {
          type: 'string',
          nullable: true,
          description: 'holderIdentity contains the identity of the holder of a current lease.',
        },
        leaseDurationSeconds: int32(
          'leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measured against the time of last observed renewTime.',
        ),
        acquireTime: microTime('acquireTime is a time when the current lease was acquired (a MicroTime: RFC 3339 with microseconds).'),
        renewTime: microTime('renewTime is a time when the current holder of a lease has last updated the lease (a MicroTime).'),
        leaseTransitions: int32('leaseTransitions is the number of transitions of a lease between holders.'),
        strategy: {
          type: 'string',
          nullable: true,
          description: 'Strategy indicates the strategy for picking the leader for coordinated leader election (e.g. OldestEmulationVersion).',
        },
        preferredHolder: {
          type: 'string',
          nullable: true,
          description: 'PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up.',
        },
      },
    },
  },
};

/** The Lease kind of coordination.k8s.io/v1. */
export const leaseDefinition: ResourceDefinition = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  namespaced: true,
  shortNames: [],
  categories: [],
  hasStatus: false,
  schema: leaseSchema,
  printerColumns: [
    { name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity', description: 'Identity of the current holder.' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the lease was created.' },
  ],
  selectableFields: [],
  verbs: ALL_VERBS,
};
