/**
 * rbac.authorization.k8s.io/v1 as kube-apiserver serves it: Role and
 * RoleBinding in a namespace (in Cairn, a Cluster), ClusterRole and
 * ClusterRoleBinding cluster-wide. The schemas hold kube's validation of
 * rules (verbs always; a resource rule names apiGroups and resources, a
 * non-resource rule only nonResourceURLs, which a Role may not have), of
 * roleRef (required; a ClusterRoleBinding refers to a ClusterRole) and of
 * subjects. ClusterRole aggregation (aggregationRule) is not served.
 * auth/rbac.ts evaluates these objects; auth/rbac-authorizer.ts enforces them.
 */
import { ALL_VERBS, type JSONSchemaProps, type PrinterColumn, type ResourceDefinition } from '../resources.js';

/** The API group of the four kinds. */
export const RBAC_GROUP = 'rbac.authorization.k8s.io';

const strings = (description: string, minItems?: number): JSONSchemaProps => ({
  type: 'array',
  description,
  items: { type: 'string' },
  ...(minItems ? { minItems } : {}),
});

const ruleFields: Record<string, JSONSchemaProps> = {
  verbs: strings('Verbs the rule allows: get, list, watch, create, update, patch, delete, deletecollection, or * for all.', 1),
  apiGroups: strings('API groups of the resources: "" for the core group (events, namespaces), cairn.dev, coordination.k8s.io, or * for all.', 1),
  resources: strings('Resources (plurals) the rule applies to: instances, instances/status, */status, or * for all.', 1),
  resourceNames: strings('Names the rule is limited to; a rule with names never allows list, watch, create or deletecollection.'),
};

const nonResourceURLs = strings('Non-resource paths (ClusterRoles only): /healthz, /apis/*, or * for all; a trailing * matches any suffix.', 1);

// A Role's rules are resource rules; a ClusterRole's are either kind, never both (kube's ValidatePolicyRule).
const roleRule: JSONSchemaProps = {
  type: 'object',
  description: 'PolicyRule holds what a Role allows on resources.',
  required: ['verbs', 'apiGroups', 'resources'],
  properties: ruleFields,
};

const clusterRoleRule: JSONSchemaProps = {
  type: 'object',
  description: 'PolicyRule holds what a ClusterRole allows: on resources (apiGroups and resources) or on non-resource paths (nonResourceURLs), not both.',
  required: ['verbs'],
  properties: { ...ruleFields, nonResourceURLs },
  oneOf: [{ required: ['apiGroups', 'resources'] }, { required: ['nonResourceURLs'] }],
};

const roleRef = (kinds: string[]): JSONSchemaProps => ({
  type: 'object',
  description: `RoleRef names the role the binding grants: a ${kinds.join(' or ')}. It cannot be changed in place; delete and recreate the binding.`,
  required: ['apiGroup', 'kind', 'name'],
  properties: {
    apiGroup: { type: 'string', enum: [RBAC_GROUP], description: 'Always rbac.authorization.k8s.io.' },
    kind: { type: 'string', enum: kinds, description: 'The kind of the role.' },
    name: { type: 'string', minLength: 1, description: 'The name of the role.' },
  },
});

const subjects: JSONSchemaProps = {
  type: 'array',
  description: 'Who the binding grants the role to.',
  items: {
    type: 'object',
    description: 'A user (the user name of a user token), a group (a token\'s spec.groups, or system:authenticated for everyone), or a service account.',
    required: ['kind', 'name'],
    properties: {
      kind: { type: 'string', enum: ['User', 'Group', 'ServiceAccount'], description: 'User, Group or ServiceAccount.' },
      name: { type: 'string', minLength: 1, description: 'The user, group or service account name.' },
      namespace: { type: 'string', description: 'ServiceAccount only: its namespace (default: the binding\'s).' },
      apiGroup: { type: 'string', description: 'rbac.authorization.k8s.io for User and Group, "" for ServiceAccount.' },
    },
  },
};

const meta = (kind: string): Record<string, JSONSchemaProps> => ({
  apiVersion: { type: 'string', description: `APIVersion: ${RBAC_GROUP}/v1.` },
  kind: { type: 'string', description: `Kind: ${kind}.` },
  metadata: { type: 'object', description: "Standard object's metadata." },
});

const roleSchema = (kind: string, rule: JSONSchemaProps, description: string): JSONSchemaProps => ({
  type: 'object',
  description,
  properties: { ...meta(kind), rules: { type: 'array', description: 'What the role allows.', items: rule } },
});

const bindingSchema = (kind: string, kinds: string[], description: string): JSONSchemaProps => ({
  type: 'object',
  description,
  required: ['roleRef'],
  properties: { ...meta(kind), roleRef: roleRef(kinds), subjects },
});

// kube prints roles with their creation time and bindings with their role; a JSONPath cell shows one value, so the wide columns show the first user and group.
const roleColumns: PrinterColumn[] = [{ name: 'Created At', type: 'string', jsonPath: '.metadata.creationTimestamp', description: 'When the role was created (RFC 3339).' }];
const bindingColumns: PrinterColumn[] = [
  { name: 'Role', type: 'string', jsonPath: '.roleRef.name', description: 'The role granted.' },
  { name: 'Kind', type: 'string', jsonPath: '.roleRef.kind', description: 'Role or ClusterRole.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the binding was created.' },
  { name: 'User', type: 'string', jsonPath: '.subjects[?(@.kind=="User")].name', priority: 1, description: 'The first User subject.' },
  { name: 'Group', type: 'string', jsonPath: '.subjects[?(@.kind=="Group")].name', priority: 1, description: 'The first Group subject.' },
];

function rbacKind(kind: string, namespaced: boolean, schema: JSONSchemaProps, printerColumns: PrinterColumn[]): ResourceDefinition {
  return {
    group: RBAC_GROUP,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [],
    categories: [],
    hasStatus: false,
    schema,
    printerColumns,
    selectableFields: [],
    verbs: ALL_VERBS,
  };
}

/** Role: rules in one namespace (Cluster). */
export const roleDefinition = rbacKind('Role', true, roleSchema('Role', roleRule, 'Role is a set of rules that apply in one namespace (in Cairn, one Cluster).'), roleColumns);
/** ClusterRole: rules a ClusterRoleBinding grants everywhere, or a RoleBinding grants in its namespace. */
export const clusterRoleDefinition = rbacKind(
  'ClusterRole',
  false,
  roleSchema('ClusterRole', clusterRoleRule, 'ClusterRole is a set of rules granted cluster-wide by a ClusterRoleBinding, or in one namespace by a RoleBinding.'),
  roleColumns,
);
/** RoleBinding: grants a Role or ClusterRole in its namespace. */
export const roleBindingDefinition = rbacKind(
  'RoleBinding',
  true,
  bindingSchema('RoleBinding', ['Role', 'ClusterRole'], 'RoleBinding grants the rules of a Role of its namespace, or of a ClusterRole, to its subjects in its namespace only.'),
  bindingColumns,
);
/** ClusterRoleBinding: grants a ClusterRole in every namespace and on cluster-scoped resources. */
export const clusterRoleBindingDefinition = rbacKind(
  'ClusterRoleBinding',
  false,
  bindingSchema('ClusterRoleBinding', ['ClusterRole'], 'ClusterRoleBinding grants the rules of a ClusterRole to its subjects everywhere.'),
  bindingColumns,
);

/** The four kinds, for the registry. */
export const rbacDefinitions: ResourceDefinition[] = [roleDefinition, clusterRoleDefinition, roleBindingDefinition, clusterRoleBindingDefinition];
