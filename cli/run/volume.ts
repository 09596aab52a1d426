/**
 * `cairn volume VERB VOLUME ...`: Kadalu's volume verbs as merge patches of
 * the Volume's spec (the apiserver validates them, docs/volumes.md):
 *   set KEY=VALUE...   spec.options[KEY] = VALUE
 *   get [KEY...]       every supported option: its value, set or default
 *   reset KEY...|--all spec.options[KEY] removed
 *   start / stop       spec.state Started / Stopped
 *   expand --size Q    spec.size = Q
 * start, stop and expand --wait follow the Volume's status to the outcome.
 */
import { effectiveGlusterOptions, GLUSTER_OPTIONS } from '../../api/gluster-options.js';
import { parseQuantity } from '../../api/quantity.js';
import { objectPath, type ResourceInfo } from '../client/catalog.js';
import type { ClientContext } from '../client/context.js';
import { CliError } from '../client/errors.js';
import { GET_PADDING, tabwrite } from '../client/tabwriter.js';
import { waitFor, type ApiObject } from '../client/watch.js';

const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };

type Verb = 'set' | 'get' | 'reset' | 'start' | 'stop' | 'expand';

/** Runs one verb on Volume `name`; `args` are its further arguments (keys, key=value pairs). */
export async function volumeVerb(ctx: ClientContext, verb: Verb, name: string, args: string[]): Promise<number> {
  const r = (await ctx.catalog()).resolveOne('volumes');
  const path = objectPath(r, ctx.namespace, name);
  if (verb === 'get') {
    process.stdout.write(optionTable(await ctx.rest.request<ApiObject>('GET', path), args));
    return 0;
  }
  const spec = specPatch(verb, args, ctx.flags);
  await ctx.rest.request<ApiObject>('PATCH', path, { body: { spec }, headers: MERGE_PATCH, query: { fieldManager: 'cairn' } });
  process.stdout.write(`volume.cairn.dev/${name} ${DONE[verb]}\n`);
  if (!ctx.flags.wait || !(verb in WAIT)) return 0;
  return waitOutcome(ctx, r, name, WAIT[verb as keyof typeof WAIT](spec));
}

const DONE: Record<Exclude<Verb, 'get'>, string> = { set: 'options set', reset: 'options reset', start: 'starting', stop: 'stopping', expand: 'expanding' };

/** The spec fields a verb changes (null removes an option, as merge patch does). */
export function specPatch(verb: Exclude<Verb, 'get'>, args: readonly string[], flags: Record<string, unknown>): Record<string, unknown> {
  switch (verb) {
    case 'set':
      return { options: Object.fromEntries(args.map(keyValue)) };
    case 'reset':
      if (flags.all) {
        if (args.length > 0) throw new CliError('give option names or --all, not both', 'cairn volume reset VOLUME --all');
        return { options: null };
      }
      if (args.length === 0) throw new CliError('name the options to reset, or --all', 'cairn volume reset VOLUME KEY...');
      return { options: Object.fromEntries(args.map((k) => [known(k), null])) };
    case 'start':
    case 'stop':
      return { state: verb === 'start' ? 'Started' : 'Stopped' };
    case 'expand':
      return { size: quantity(String(flags.size)) };
  }
}

function keyValue(arg: string): [string, string] {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new CliError(`"${arg}" is not KEY=VALUE`, 'e.g. cairn volume set data network.ping-timeout=10');
  return [known(arg.slice(0, eq)), arg.slice(eq + 1)];
}

function known(key: string): string {
  if (!GLUSTER_OPTIONS[key]) throw new CliError(`unsupported option "${key}"`, `supported options: ${Object.keys(GLUSTER_OPTIONS).join(', ')} (cairn volume get VOLUME shows them)`);
  return key;
}

function quantity(size: string): string {
  try {
    parseQuantity(size);
    return size;
  } catch {
    throw new CliError(`--size ${size} is not a size`, 'a binary quantity such as 512Mi, 20Gi or 1Ti');
  }
}

/** The table `get` prints: OPTION VALUE SOURCE, for `keys` or every supported option. */
export function optionTable(volume: ApiObject, keys: readonly string[]): string {
  const set = (volume.spec?.options ?? {}) as Record<string, string>;
  const all = effectiveGlusterOptions(set);
  for (const k of keys) known(k);
  const rows = (keys.length > 0 ? keys : Object.keys(all)).map((k) => [k, all[k]!, k in set ? 'set' : 'default']);
  return tabwrite([['OPTION', 'VALUE', 'SOURCE'], ...rows], GET_PADDING);
}

type Outcome = (v: ApiObject) => { done: false } | { done: true; ok: boolean; text: string };

interface Replica { size?: string; brick?: { state?: string } }
const status = (v: ApiObject) => (v.status ?? {}) as { phase?: string; message?: string; observedGeneration?: number; replicas?: Replica[] };
const current = (v: ApiObject) => status(v).observedGeneration === v.metadata.generation;
const replicas = (v: ApiObject) => status(v).replicas ?? [];

const WAIT: Record<'start' | 'stop' | 'expand', (spec: Record<string, unknown>) => Outcome> = {
  // Degraded is passed through on the way up (bricks start one by one); Failed needs the user.
  start: () => (v) => (current(v) && ['Ready', 'Failed'].includes(status(v).phase ?? '') ? { done: true, ok: status(v).phase === 'Ready', text: `is ${status(v).phase}: ${status(v).message ?? ''}` } : { done: false }),
  stop: () => (v) => (current(v) && status(v).phase === 'Stopped' && replicas(v).every((r) => r.brick?.state !== 'Running') ? { done: true, ok: true, text: 'is Stopped: no brick runs, the data is kept' } : { done: false }),
  expand: (spec) => (v) => (current(v) && status(v).phase === 'Ready' && replicas(v).every((r) => r.size === spec.size) ? { done: true, ok: true, text: `has grown to ${String(spec.size)} on every brick` } : { done: false }),
};

async function waitOutcome(ctx: ClientContext, r: ResourceInfo, name: string, outcome: Outcome): Promise<number> {
  const last = await waitFor(ctx, r, ctx.namespace, name, (v) => !v || outcome(v).done, { timeoutMs: ctx.flags.timeout as number, what: 'the volume' });
  if (!last) throw new CliError(`volume ${name} was deleted while waiting`);
  const o = outcome(last) as Extract<ReturnType<Outcome>, { done: true }>;
  (o.ok ? process.stdout : process.stderr).write(`volume.cairn.dev/${name} ${o.text}\n`);
  return o.ok ? 0 : 1;
}
