/**
 * Core v1 Secret and ConfigMap as kube-apiserver serves them: namespaced in
 * Clusters, no status subresource. Helm keeps its releases in them (Secrets
 * by default, ConfigMaps with HELM_DRIVER=configmap), and GitOps tools ship
 * them next to the objects that read them. Secrets are encrypted at rest
 * (storage/encryption.ts); `stringData` is folded into `data` on every
 * write, as kube does (rest/config-data.ts).
 */
import { ALL_VERBS, type JSONSchemaProps, type ResourceDefinition } from '../resources.js';

const str = (description: string): JSONSchemaProps => ({ type: 'string', description });
const stringMap = (description: string, format?: string): JSONSchemaProps => ({
  type: 'object',
  nullable: true,
  description,
  additionalProperties: { type: 'string', ...(format ? { format } : {}) },
});
const immutable: JSONSchemaProps = {
  type: 'boolean',
  nullable: true,
  description: 'Immutable, if set to true, ensures that data stored in the object cannot be updated (only object metadata can be modified).',
};
const typeMeta = (kind: string): Record<string, JSONSchemaProps> => ({
  apiVersion: str('APIVersion defines the versioned schema of this representation of an object: v1.'),
  kind: str(`Kind is a string value representing the REST resource this object represents: ${kind}.`),
  metadata: { type: 'object', description: "Standard object's metadata." },
});

const secretSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Secret holds secret data of a certain type. Cairn encrypts its data at rest in etcd; node credentials may not read it.',
  properties: {
    ...typeMeta('Secret'),
    data: stringMap('Data contains the secret data: each value is base64 encoded. Keys consist of alphanumerics, -, _ or .', 'byte'),
    stringData: stringMap('stringData allows specifying non-binary secret data in string form. It is write-only: merged into data on write, overwriting existing keys, and never output when reading.'),
    type: str('Used to facilitate programmatic handling of secret data (Opaque, kubernetes.io/tls, helm.sh/release.v1, ...); Opaque when unset.'),
    immutable,
  },
};

const configMapSchema: JSONSchemaProps = {
  type: 'object',
  description: 'ConfigMap holds configuration data for instances to consume.',
  properties: {
    ...typeMeta('ConfigMap'),
    data: stringMap('Data contains the configuration data. Each key must consist of alphanumerics, -, _ or .'),
    binaryData: stringMap('BinaryData contains the binary data, each value base64 encoded. Its keys may not also be keys of data.', 'byte'),
    immutable,
  },
};

const age = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the object was created.' } as const;

/** The Secret kind of the core v1 group. */
export const secretDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  shortNames: [],
  categories: [],
  hasStatus: false,
  schema: secretSchema,
  printerColumns: [{ name: 'Type', type: 'string', jsonPath: '.type', description: 'The type of the secret.' }, age],
  selectableFields: ['type'],
  verbs: ALL_VERBS,
};

/** The ConfigMap kind of the core v1 group. */
export const configMapDefinition: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  namespaced: true,
  shortNames: ['cm'],
  categories: [],
  hasStatus: false,
  schema: configMapSchema,
  printerColumns: [age],
  selectableFields: [],
  verbs: ALL_VERBS,
};
