/**
 * What the server serves, learnt from discovery (`/api/v1`, `/apis`, one
 * APIResourceList per group), and how a word a user types (`instances`,
 * `instance`, `inst`, `Instance`, `instances.cairn.dev`, the category
 * `cairn`) names one or more of those resources. Cairn's own group wins a
 * name clash (`nodes` are Cairn nodes), as this is Cairn's CLI.
 */
import { GROUP } from '../../api/types.js';
import type { ApiClient } from './api-client.js';
import { CliError } from './errors.js';

/** One served resource. */
export interface ResourceInfo {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
}

interface DiscoveredResource {
  name: string;
  singularName?: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

interface ResourceList {
  groupVersion: string;
  resources: DiscoveredResource[];
}

interface GroupList {
  groups: { name: string; preferredVersion?: { groupVersion: string } }[];
}

/** `apiVersion` of a resource (`v1`, `cairn.dev/v1alpha1`). */
export function apiVersionOf(r: ResourceInfo): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** `instances.cairn.dev`, or `events` for the core group: how kube names a resource in messages. */
export function qualifiedName(r: ResourceInfo): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}

/** URL path of a resource's collection in a namespace (or across all of them). */
export function collectionPath(r: ResourceInfo, namespace?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${namespace}/${r.plural}` : `${base}/${r.plural}`;
}

/** URL path of one object. */
export function objectPath(r: ResourceInfo, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, r.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
}

/** The served resources, with lookups by user input and by apiVersion/kind. */
export class ResourceCatalog {
  constructor(readonly resources: ResourceInfo[]) {}

  /** Reads discovery from the server. */
  static async discover(rest: Pick<ApiClient, 'request'>): Promise<ResourceCatalog> {
    const groups = await rest.request<GroupList>('GET', '/apis');
    const lists = await Promise.all([
      rest.request<ResourceList>('GET', '/api/v1'),
      ...groups.groups.flatMap((g) => (g.preferredVersion ? [rest.request<ResourceList>('GET', `/apis/${g.preferredVersion.groupVersion}`)] : [])),
    ]);
    return new ResourceCatalog(lists.flatMap(toInfos).sort(byPreference));
  }

  /** Resources a word names: one, or several for a category; throws a CliError naming the word otherwise. */
  resolve(word: string): ResourceInfo[] {
    const w = word.toLowerCase();
    const dot = w.indexOf('.');
    const [name, group] = dot > 0 ? [w.slice(0, dot), w.slice(dot + 1)] : [w, undefined];
    const candidates = this.resources.filter((r) => group === undefined || r.group === group || `${r.version}.${r.group}` === group);
    const match = candidates.find((r) => [r.plural, r.singular, r.kind.toLowerCase(), ...r.shortNames].includes(name));
    if (match) return [match];
    const category = group === undefined ? this.resources.filter((r) => r.categories.includes(name)) : [];
    if (category.length > 0) return category;
    throw new CliError(
      `the server doesn't have a resource type "${word}"`,
      `list the resource types with 'kubectl api-resources'; Cairn's are ${this.resources.filter((r) => r.group === GROUP).map((r) => r.plural).join(', ')}`,
    );
  }

  /** Exactly one resource for a word (a category is refused). */
  resolveOne(word: string): ResourceInfo {
    const found = this.resolve(word);
    if (found.length !== 1) throw new CliError(`"${word}" names ${found.length} resource types; name one of ${found.map((r) => r.plural).join(', ')}`);
    return found[0]!;
  }

  /** The resource of a manifest's apiVersion and kind. */
  forKind(apiVersion: string, kind: string): ResourceInfo | undefined {
    return this.resources.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
  }
}

function toInfos(list: ResourceList): ResourceInfo[] {
  const [group, version] = list.groupVersion.includes('/') ? list.groupVersion.split('/') : ['', list.groupVersion];
  return list.resources
    .filter((r) => !r.name.includes('/'))
    .map((r) => ({
      group: group!,
      version: version!,
      plural: r.name,
      singular: r.singularName || r.kind.toLowerCase(),
      kind: r.kind,
      namespaced: r.namespaced,
      shortNames: r.shortNames ?? [],
      categories: r.categories ?? [],
      verbs: r.verbs ?? [],
    }));
}

// Cairn's group first, then the core group, then the rest by name.
function byPreference(a: ResourceInfo, b: ResourceInfo): number {
  const rank = (r: ResourceInfo) => (r.group === GROUP ? 0 : r.group === '' ? 1 : 2);
  return rank(a) - rank(b) || a.group.localeCompare(b.group);
}
