/**
 * auth.cairn.dev/v1alpha1 Token: one credential the apiserver accepts,
 * stored as the SHA-256 of the token, never the token itself. A token reads
 * `<id>.<secret>`; the id is the object's name, so a presented token is
 * looked up by name and then its digest compared.
 *   - join: exchanged by `cairn agent --join-token` for a node credential;
 *     bound to a Cluster, limited in uses and time.
 *   - node: what an agent holds; bound to one Node of one Cluster.
 *   - user: what `cairn user create` issues; RBAC bindings say what it may do.
 */
import { ALL_VERBS, type JSONSchemaProps, type ResourceDefinition } from '../resources.js';

const str = (description: string, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'string', description, ...extra });

const tokenSchema: JSONSchemaProps = {
  type: 'object',
  description: 'A credential the apiserver accepts, stored as a SHA-256 digest.',
  properties: {
    apiVersion: str('auth.cairn.dev/v1alpha1'),
    kind: str('Token'),
    metadata: { type: 'object', description: "Standard object's metadata; the name is the token's id (the part before the dot)." },
    spec: {
      type: 'object',
      description: 'What the token is for and how long it lasts.',
      required: ['type', 'secretHash'],
      properties: {
        type: str('join (exchanged once for a node credential), node (an agent), or user (a person or a tool).', { enum: ['join', 'node', 'user'] }),
        secretHash: str('SHA-256 of the whole token `<id>.<secret>`, lowercase hex.', { pattern: '^[0-9a-f]{64}$' }),
        user: str('user tokens: the user name RBAC bindings refer to.', { maxLength: 253 }),
        groups: { type: 'array', description: 'user tokens: groups RBAC bindings may refer to.', items: { type: 'string' } },
        cluster: str('join and node tokens: the Cluster (namespace) the node belongs to.'),
        nodeName: str('node tokens: the Node the holder acts as.'),
        expires: str('When the token stops being accepted (RFC 3339); never when unset.', { format: 'date-time' }),
        maxUses: { type: 'integer', minimum: 1, default: 1, description: 'join tokens: how many nodes may join with it.' },
        revoked: { type: 'boolean', default: false, description: 'A revoked token is refused at once.' },
        description: str('What the token is for, for people.'),
      },
    },
    status: {
      type: 'object',
      description: 'How the token has been used.',
      properties: {
        uses: { type: 'integer', minimum: 0, description: 'join tokens: how many nodes joined with it.' },
        joinedNodes: { type: 'array', items: { type: 'string' }, description: 'join tokens: the nodes that joined with it.' },
      },
    },
  },
};

/** The Token kind of auth.cairn.dev/v1alpha1. */
export const tokenDefinition: ResourceDefinition = {
  group: 'auth.cairn.dev',
  version: 'v1alpha1',
  kind: 'Token',
  listKind: 'TokenList',
  plural: 'tokens',
  singular: 'token',
  namespaced: false,
  shortNames: [],
  categories: [],
  hasStatus: true,
  schema: tokenSchema,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'join, node or user.' },
    { name: 'User', type: 'string', jsonPath: '.spec.user', description: 'The user of a user token.' },
    { name: 'Cluster', type: 'string', jsonPath: '.spec.cluster', description: 'The Cluster of a join or node token.' },
    { name: 'Node', type: 'string', jsonPath: '.spec.nodeName', description: 'The Node of a node token.' },
    { name: 'Expires', type: 'string', jsonPath: '.spec.expires', description: 'When it stops being accepted.' },
    { name: 'Uses', type: 'integer', jsonPath: '.status.uses', description: 'Joins made with a join token.' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since it was issued.' },
  ],
  selectableFields: ['spec.type'],
  verbs: ALL_VERBS,
};
