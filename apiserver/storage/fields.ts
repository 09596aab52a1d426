/**
 * Reading selectable fields out of objects: `metadata.name`,
 * `metadata.namespace`, and the per-kind fields a definition declares
 * (`spec.nodeName` on WorkItems, `involvedObject.*` on Events).
 */
import type { KubeObject } from './codec.js';

// kube's Event field set names `source` for `source.component`.
const aliases: Record<string, string> = { source: 'source.component' };

/** The string value of a dotted field path, '' when absent (as kube compares it). */
export function fieldValue(obj: KubeObject, field: string): string {
  let cur: unknown = obj;
  for (const part of (aliases[field] ?? field).split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur === undefined || cur === null ? '' : String(cur);
}
