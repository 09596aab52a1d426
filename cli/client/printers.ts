/**
 * The machine-readable outputs of the read verbs, shaped as kubectl's: one
 * object, or a `v1 List` of them, as YAML (sequences not indented) or JSON
 * (4-space indent); `-o name` as `instance.cairn.dev/web`; and the message
 * an empty human-readable result prints on stderr. Pure.
 */
import { createRequire } from 'node:module';
import type { ResourceInfo } from './catalog.js';

// yaml takes about 50 ms to load, a good part of `cairn get`'s run: only YAML output pays for it, loaded on first
// use through require (under bin/cairn.js a copy of its own from node_modules, beside the one bundled).
const require = createRequire(import.meta.url);
let yaml: typeof import('yaml') | undefined;
const YAML = (): typeof import('yaml') => (yaml ??= require('yaml') as typeof import('yaml'));

/** `instance.cairn.dev`, or `event` for the core group: the kind part of `-o name`. */
export function kindName(r: ResourceInfo): string {
  const kind = r.kind.toLowerCase();
  return r.group ? `${kind}.${r.group}` : kind;
}

/** `instance.cairn.dev/web`. */
export function resourceName(r: ResourceInfo, name: string): string {
  return `${kindName(r)}/${name}`;
}

/** A `v1 List` of objects, as kubectl prints several. */
export function asList(items: readonly unknown[]): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } };
}

/** One document as YAML or JSON, ending in a newline. */
export function formatDocument(doc: unknown, format: 'yaml' | 'json'): string {
  return format === 'json' ? `${JSON.stringify(doc, null, 4)}\n` : YAML().stringify(doc, { indentSeq: false });
}

/** What an empty human-readable listing prints on stderr (namespace undefined: -A or cluster-scoped). */
export function noResourcesMessage(namespace: string | undefined): string {
  return namespace ? `No resources found in ${namespace} namespace.` : 'No resources found';
}

/**
 * Objects printed one by one as they arrive (`get -w -o yaml|json|name`):
 * YAML documents separated by `---`, JSON objects back to back, names one a line.
 */
export class ObjectStream {
  private count = 0;

  constructor(private readonly format: 'yaml' | 'json' | 'name') {}

  /** Text for one object of resource `r`. */
  print(r: ResourceInfo, obj: { metadata: { name: string } }): string {
    if (this.format === 'name') return `${resourceName(r, obj.metadata.name)}\n`;
    const separator = this.format === 'yaml' && this.count > 0 ? '---\n' : '';
    this.count++;
    return separator + formatDocument(obj, this.format);
  }
}
