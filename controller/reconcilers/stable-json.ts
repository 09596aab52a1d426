/** JSON with object keys sorted and undefined fields dropped, for comparing and hashing objects. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => `${JSON.stringify(k)}:${stableJson(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * Whether two JSON values are equal up to key order and undefined fields (stableJson(a) === stableJson(b), without
 * building either). Loops rather than entry arrays and closures: it runs on every status and spec a reconcile
 * compares, and its garbage was nearly a tenth of the controller's.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && sameItems(a, b);
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let fields = 0;
  for (const k in left) {
    if (!Object.hasOwn(left, k) || left[k] === undefined) continue;
    if (!sameJson(left[k], right[k])) return false;
    fields++;
  }
  for (const k in right) if (Object.hasOwn(right, k) && right[k] !== undefined) fields--;
  return fields === 0;
}

function sameItems(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
  return true;
}
