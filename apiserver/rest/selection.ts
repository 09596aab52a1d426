/**
 * Which objects a list or watch asks for: the namespace in the URL plus
 * `labelSelector` and `fieldSelector`, turned into one predicate. A field
 * selector on a field the kind does not index is refused with 400, as kube
 * refuses "field label not supported".
 */
import { badRequest } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import { parseFieldSelector } from '../selectors/fields.js';
import { parseLabelSelector } from '../../api/label-selector.js';
import { SelectorError } from '../../api/selector-error.js';
import type { KubeObject } from '../storage/codec.js';
import type { Predicate } from '../storage/events.js';
import { fieldValue } from '../storage/fields.js';

/** A parsed selection. */
export interface Selection {
  matches: Predicate;
  /** An `=` requirement on an indexed field, to narrow candidates. */
  exact?: { field: string; value: string };
}

/** Builds the selection of a list/watch request. */
export function parseSelection(def: ResourceDefinition, namespace: string | undefined, labelSel: unknown, fieldSel: unknown): Selection {
  try {
    const labels = parseLabelSelector(asString(labelSel, 'labelSelector'));
    const fields = parseFieldSelector(asString(fieldSel, 'fieldSelector'));
    const allowed = new Set(['metadata.name', 'metadata.namespace', ...def.selectableFields]);
    for (const f of fields.fields()) {
      if (!allowed.has(f)) throw badRequest(`field label not supported: ${f}`);
    }
    const matches = (obj: KubeObject) =>
      (namespace === undefined || obj.metadata.namespace === namespace) &&
      labels.matches(obj.metadata.labels) &&
      fields.matches((f) => fieldValue(obj, f));
    const field = def.selectableFields.find((f) => fields.exactValue(f) !== undefined);
    return { matches, exact: field ? { field, value: fields.exactValue(field)! } : undefined };
  } catch (err) {
    if (err instanceof SelectorError) throw badRequest(`unable to parse selector: ${err.message}`);
    throw err;
  }
}

function asString(v: unknown, name: string): string {
  if (v === undefined) return '';
  if (typeof v !== 'string') throw badRequest(`${name} must be given once, as a string`);
  return v;
}
