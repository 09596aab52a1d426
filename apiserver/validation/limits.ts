/**
 * The apiserver's limits on what a request may make it do (docs/limits.md).
 * Every one is answered with a 4xx before the work it bounds: a request
 * that could make the single event loop spin for seconds, or build an
 * object every later read chokes on, is refused at the door.
 */

/** Bytes of a request body (API.md): 1.5 MiB, what etcd accepts in one request. */
export const BODY_LIMIT_BYTES = 1.5 * 1024 * 1024;
/**
 * Nesting of objects and arrays in a body or a stored object. Real objects
 * nest about 10 deep; every recursive walk of an object (merge, apply,
 * validation, managedFields) is bounded by this.
 */
export const MAX_NESTING_DEPTH = 100;
/** Values (objects, arrays, scalars) in a decoded body, after YAML aliases are expanded. */
export const MAX_VALUES = 100_000;
/** YAML aliases a body may use (each can stand for a whole subtree). */
export const MAX_YAML_ALIASES = 50;
/** Operations in one JSON patch, as kube allows. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/** Bytes a JSON patch may copy in all (kube's AccumulatedCopySizeLimit): no more than an object may hold. */
export const MAX_JSON_PATCH_COPY_BYTES = BODY_LIMIT_BYTES;

/** Where a value breaks a shape limit: a path (`.spec.a[3]`) and why. */
export interface ShapeProblem {
  path: string;
  message: string;
}

/**
 * Checks nesting depth and value count; undefined when within limits. Safe on anything JSON.parse or
 * YAML returned, however deep: it never descends past maxDepth, so its recursion is bounded too.
 * Allocates nothing per value (a body may hold hundreds of thousands), except to name a problem's path.
 */
export function shapeProblem(value: unknown, maxDepth = MAX_NESTING_DEPTH, maxValues = MAX_VALUES): ShapeProblem | undefined {
  let values = 0;
  const visit = (v: unknown, depth: number): ShapeProblem | undefined => {
    if (++values > maxValues) return { path: '', message: `more than ${maxValues} values in all` };
    if (v === null || typeof v !== 'object') return undefined;
    if (depth >= maxDepth) return { path: '', message: `nested more than ${maxDepth} levels deep` };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const p = visit(v[i], depth + 1);
        if (p) return { ...p, path: `[${i}]${p.path}` };
      }
      return undefined;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const p = visit((v as Record<string, unknown>)[k], depth + 1);
      if (p) return { ...p, path: `.${k}${p.path}` };
    }
    return undefined;
  };
  const problem = visit(value, 0);
  return problem && { ...problem, path: shorten(problem.path || '.') };
}

function shorten(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}
