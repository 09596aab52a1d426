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
export const MAX_VALUES = 500_000;
/** YAML aliases a body may use (each can stand for a whole subtree). */
export const MAX_YAML_ALIASES = 50;
/** Operations in one JSON patch, as kube allows. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/** Bytes a JSON patch may copy in all (its `copy` and `move`-free growth), as kube's AccumulatedCopySizeLimit. */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * BODY_LIMIT_BYTES;

/** Where a value breaks a shape limit: a path (`.spec.a[3]`) and why. */
export interface ShapeProblem {
  path: string;
  message: string;
}

interface Visit {
  v: unknown;
  depth: number;
  parent?: Visit;
  step: string;
}

/**
 * Checks nesting depth and value count without recursion (a hostile value may nest deeper than
 * the stack), so it is safe on anything JSON.parse or YAML returned; undefined when within limits.
 */
export function shapeProblem(value: unknown, maxDepth = MAX_NESTING_DEPTH, maxValues = MAX_VALUES): ShapeProblem | undefined {
  const stack: Visit[] = [{ v: value, depth: 0, step: '' }];
  let values = 0;
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (++values > maxValues) return { path: pathOf(at), message: `more than ${maxValues} values in all` };
    const v = at.v;
    if (v === null || typeof v !== 'object') continue;
    if (at.depth >= maxDepth) return { path: pathOf(at), message: `nested more than ${maxDepth} levels deep` };
    if (Array.isArray(v)) v.forEach((c, i) => stack.push({ v: c, depth: at.depth + 1, parent: at, step: `[${i}]` }));
    else for (const k of Object.keys(v)) stack.push({ v: (v as Record<string, unknown>)[k], depth: at.depth + 1, parent: at, step: `.${k}` });
  }
  return undefined;
}

/** `.spec.a[3]` of a visited value (the path is built only for a problem: most values have none). */
function pathOf(at: Visit): string {
  const steps: string[] = [];
  for (let v: Visit | undefined = at; v; v = v.parent) steps.push(v.step);
  const path = steps.reverse().join('') || '.';
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}
