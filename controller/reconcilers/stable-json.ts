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

/** Whether two JSON values are equal up to key order and undefined fields (stableJson(a) === stableJson(b), without building either). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const defined = (o: object) => Object.entries(o).filter(([, x]) => x !== undefined);
  const left = defined(a);
  const right = b as Record<string, unknown>;
  return left.length === defined(b).length && left.every(([k, x]) => sameJson(x, right[k]));
}
