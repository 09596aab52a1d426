/**
 * Binding the objects of the input to what the server serves: each manifest
 * to its resource (by apiVersion and kind, from discovery) and namespace (the
 * manifest's, else -n or the context's; a manifest namespace that differs
 * from an explicit -n is refused, as kubectl does), and the names kubectl
 * uses for them in its messages. Pure: the catalog is passed in.
 */
import { GROUP } from '../../api/types.js';
import type { ResourceCatalog, ResourceInfo } from './catalog.js';
import { CliError } from './errors.js';
import { resourceName } from './printers.js';
import type { Manifest } from './manifests.js';
import type { ApiObject } from './watch.js';

/** One manifest bound to its resource and namespace. */
export interface Target {
  r: ResourceInfo;
  /** Undefined for a cluster-scoped kind. */
  namespace?: string;
  name: string;
  /** The manifest, its namespace filled in. */
  object: ApiObject;
  /** Where the manifest was read. */
  source: string;
}

/** The namespace a manifest without one goes to, and whether it came from -n. */
export interface NamespaceRule {
  namespace: string;
  explicit: boolean;
}

/** Binds one manifest; throws a CliError for a kind the server does not serve or a namespace that clashes with -n. */
export function toTarget(m: Manifest, catalog: ResourceCatalog, rule: NamespaceRule): Target {
  const { apiVersion, kind, metadata } = m.object;
  const name = metadata.name;
  const r = catalog.forKind(String(apiVersion), String(kind));
  if (!r) {
    const ns = metadata.namespace ?? rule.namespace;
    throw new CliError(
      `resource mapping not found for name: "${name}" namespace: "${ns}" from "${m.source}": no matches for kind "${kind}" in version "${apiVersion}"`,
      `the server serves the kinds ${cairnKinds(catalog)} in apiVersion ${GROUP}/${catalog.resources.find((x) => x.group === GROUP)?.version ?? 'v1alpha1'} (besides the core ones): check the apiVersion and kind of the manifest`,
    );
  }
  if (!r.namespaced) return { r, name, object: m.object, source: m.source };
  const namespace = metadata.namespace ?? rule.namespace;
  if (rule.explicit && namespace !== rule.namespace) {
    throw new CliError(
      `the namespace from the provided object "${namespace}" does not match the namespace "${rule.namespace}". You must pass '--namespace=${namespace}' to perform this operation.`,
      `${m.source} puts ${resourceName(r, name)} in namespace ${namespace}; drop -n or its metadata.namespace`,
    );
  }
  return { r, namespace, name, object: { ...m.object, metadata: { ...metadata, namespace } }, source: m.source };
}

/** A key naming one object across kinds and namespaces, for sets of objects. */
export function objectKey(r: ResourceInfo, namespace: string | undefined, name: string): string {
  return `${r.group}/${r.kind}/${namespace ?? ''}/${name}`;
}

function cairnKinds(catalog: ResourceCatalog): string {
  return catalog.resources
    .filter((r) => r.group === GROUP)
    .map((r) => r.kind)
    .join(', ');
}
