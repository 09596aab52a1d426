/**
 * The machine-readable outputs of the read verbs, shaped as kubectl's: one
 * object, or a `v1 List` of them, as YAML (sequences not indented) or JSON
 * (4-space indent); `-o name` as `instance.cairn.dev/web`; and the message
 * an empty human-readable result prints on stderr. Pure, but for loading yaml.
 */
import type { ResourceInfo } from './catalog.js';

/** Turns one document into text ending in a newline. */
export type DocumentFormatter = (doc: unknown) => string;

/**
 * The formatter of one output format, as kubectl prints it: YAML with sequences not indented, or JSON with a
 * 4-space indent. yaml takes about 50 ms to load, a good part of `cairn get`'s run: only YAML output loads it.
 */
export async function documentFormatter(format: 'yaml' | 'json'): Promise<DocumentFormatter> {
  if (format === 'json') return (doc) => `${JSON.stringify(doc, null, 4)}\n`;
  const { default: YAML } = await import('yaml');
  return (doc) => YAML.stringify(doc, { indentSeq: false });
}

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

  private constructor(
    private readonly format: 'yaml' | 'json' | 'name',
    private readonly formatDocument?: DocumentFormatter,
  ) {}

  /** A stream of objects in `format`. */
  static async open(format: 'yaml' | 'json' | 'name'): Promise<ObjectStream> {
    return new ObjectStream(format, format === 'name' ? undefined : await documentFormatter(format));
  }

  /** Text for one object of resource `r`. */
  print(r: ResourceInfo, obj: { metadata: { name: string } }): string {
    if (!this.formatDocument) return `${resourceName(r, obj.metadata.name)}\n`;
    const separator = this.format === 'yaml' && this.count > 0 ? '---\n' : '';
    this.count++;
    return separator + this.formatDocument(obj);
  }
}
