/**
 * The resource model the apiserver serves: one ResourceDefinition per kind,
 * built from a CustomResourceDefinition in crds/ or from a built-in kind
 * (Lease, Event, Namespace). Handlers, storage, discovery and OpenAPI all
 * read these definitions; nothing else describes a kind.
 */

/** An OpenAPI v3 schema as a structural CRD schema writes it. */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  [extension: string]: unknown;
}

/**
 * The schema of the field `key` that `schema` declares; undefined when it declares none. Own properties
 * only: a field named like a member of every object (`constructor`, `toString`, `__proto__`) is not declared
 * by being inherited, and was so kept past pruning and Strict validation.
 */
export function declaredProperty(schema: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined {
  const props = schema?.properties;
  return props && Object.hasOwn(props, key) ? props[key] : undefined;
}

/** One column of `kubectl get`, as a CRD's additionalPrinterColumns declares it. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

/** Everything the apiserver knows about one served kind. */
export interface ResourceDefinition {
  /** '' for the core group (v1 Namespace, Event). */
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Whether `/status` is a subresource (the main endpoint then ignores status). */
  hasStatus: boolean;
  /** The openAPIV3Schema of the whole object (apiVersion, kind, metadata, spec, status). */
  schema: JSONSchemaProps;
  printerColumns: PrinterColumn[];
  /** Field selectors beyond metadata.name / metadata.namespace, e.g. spec.nodeName. */
  selectableFields: string[];
  /** Verbs advertised in discovery. */
  verbs: string[];
  /** For a kind served only so tools find it (always empty): why writes are refused, and what to use instead. */
  refusal?: string;
}

/** The verbs every stored kind supports. */
export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** `group/version`, or just `version` for the core group. */
export function groupVersion(def: Pick<ResourceDefinition, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
