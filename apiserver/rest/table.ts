/**
 * `meta.k8s.io/v1` Table responses for `kubectl get`: a Name column, then
 * the kind's printer columns (JSONPath cells, dates rendered as ages on the
 * server), one row per object with its PartialObjectMetadata.
 */
import { JSONPath } from 'jsonpath-plus';
import type { PrinterColumn, ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { humanDuration } from '../../api/human-duration.js';

/** Whether an Accept header asks for a Table. */
export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /(^|[;,\s])as=Table/.test(accept);
}

/** What a row's `object` holds (`includeObject` parameter). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

const defaultColumns: PrinterColumn[] = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];

/** Renders objects as a Table. */
export function toTable(
  def: ResourceDefinition,
  items: KubeObject[],
  listMeta: { resourceVersion?: string; continue?: string },
  include: IncludeObject,
  now: number,
): Record<string, unknown> {
  const columns = def.printerColumns.length > 0 ? def.printerColumns : defaultColumns;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
      ...columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 })),
    ],
    rows: items.map((obj) => ({
      cells: [obj.metadata.name, ...columns.map((c) => cell(c, obj, now))],
      object: rowObject(obj, include),
    })),
  };
}

function rowObject(obj: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

function cell(col: PrinterColumn, obj: KubeObject, now: number): unknown {
  const value = evaluate(col.jsonPath, obj);
  if (value === undefined || value === null) return null;
  if (col.type === 'date') {
    const t = Date.parse(String(value));
    return Number.isNaN(t) ? String(value) : humanDuration(now - t);
  }
  if (col.type === 'integer' || col.type === 'number') return typeof value === 'number' ? value : Number(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
}

/** The first value a kube-style JSONPath (`.status.conditions[?(@.type=="Ready")].status`) selects. */
export function evaluate(path: string, obj: unknown): unknown {
  const expr = path.startsWith('$') ? path : `$${path.startsWith('.') || path.startsWith('[') ? '' : '.'}${path}`;
  try {
    const result = JSONPath({ path: expr, json: obj as object, wrap: true, eval: 'safe' }) as unknown[];
    return result[0];
  } catch {
    return undefined;
  }
}
