/**
 * The GlusterFS options a gluster Volume may set in spec.options (the
 * Kadalu/gluster `volume set` keys), each with the values it accepts, its
 * default, and the translator option it becomes. All of them live in the
 * client's and the self-heal daemon's volfiles: a change reaches a mounted
 * client online (the agent's volfile server pushes the new graph) and
 * restarts only the self-heal daemons, never a brick. docs/volumes.md lists them.
 */

/** Where an option lands in the volfiles. */
export type OptionTarget =
  /** an option of cluster/replicate, in the client's and the self-heal daemon's graphs */
  | { replicate: string }
  /** an option of cluster/replicate in the self-heal daemon's graph only */
  | { shdReplicate: string }
  /** an option of every protocol/client */
  | { client: string }
  /** an option of the FUSE client's write-behind layer */
  | { writeBehind: string }
  /** whether the FUSE client's graph has its write-behind layer */
  | { writeBehindLayer: true }
  /** an option of the FUSE client's io-stats, the top of its graph */
  | { clientIoStats: string };

/** One supported option. */
export interface GlusterOption {
  /** What values it takes, for messages: "auto, fixed, none". */
  accepts: string;
  valid(value: string): boolean;
  /** What GlusterFS does while the option is unset (for display: an unset option is not written). */
  default: string;
  target: OptionTarget;
  description: string;
}

const oneOf = (...values: string[]) => ({ accepts: values.join(', '), valid: (v: string) => values.includes(v) });
const integer = (min: number, max: number) => ({ accepts: `an integer from ${min} to ${max}`, valid: (v: string) => /^[0-9]+$/.test(v) && Number(v) >= min && Number(v) <= max });
const bytes = { accepts: 'a size from 512KB to 1GB (KB, MB or GB)', valid: (v: string) => withinBytes(v, 512 * 1024, 1024 ** 3) };

function withinBytes(v: string, min: number, max: number): boolean {
  const m = /^([0-9]+)(KB|MB|GB)?$/.exec(v);
  if (!m) return false;
  const n = Number(m[1]) * ({ KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[m[2] ?? ''] ?? 1);
  return n >= min && n <= max;
}

/** The supported options by name. */
export const GLUSTER_OPTIONS: Readonly<Record<string, GlusterOption>> = {
  'cluster.quorum-type': { ...oneOf('auto', 'fixed', 'none'), default: 'auto', target: { replicate: 'quorum-type' }, description: 'auto: writes need more than half the bricks (or half including the first); fixed: cluster.quorum-count bricks; none: any brick (risks split-brain)' },
  'cluster.quorum-count': { ...integer(1, 3), default: 'unset', target: { replicate: 'quorum-count' }, description: 'bricks a write needs under quorum-type fixed' },
  'cluster.favorite-child-policy': { ...oneOf('none', 'size', 'ctime', 'mtime', 'majority'), default: 'none', target: { replicate: 'favorite-child-policy' }, description: 'how split-brain files are resolved automatically; none leaves them for an operator' },
  'cluster.data-self-heal-algorithm': { ...oneOf('full', 'diff'), default: 'dynamic', target: { replicate: 'data-self-heal-algorithm' }, description: 'full copies whole files on heal; diff only the blocks that differ (less I/O, more CPU); unset, AFR picks per file' },
  'cluster.heal-timeout': { ...integer(5, 86400), default: '600', target: { shdReplicate: 'heal-timeout' }, description: 'seconds between the self-heal daemon\'s full crawls (it also heals at once when a brick it saw go returns, and the controller restarts it sooner when pending heals stand still for 30 s with every brick up)' },
  'network.ping-timeout': { ...integer(1, 1013), default: '42', target: { client: 'ping-timeout' }, description: 'seconds without an answer before a client gives up on a brick' },
  'performance.write-behind': { ...oneOf('on', 'off'), default: 'on', target: { writeBehindLayer: true }, description: 'whether the client acknowledges writes before the bricks have them (they still have them by fsync/close)' },
  'performance.write-behind-window-size': { ...bytes, default: '1MB', target: { writeBehind: 'cache-size' }, description: 'bytes per file the client may hold back' },
  'diagnostics.client-log-level': { ...oneOf('CRITICAL', 'ERROR', 'WARNING', 'INFO', 'DEBUG', 'TRACE', 'NONE'), default: 'INFO', target: { clientIoStats: 'log-level' }, description: 'log level of the FUSE mounts\' logs' },
};

/** A problem with one entry of spec.options: the field path's key and what to do. */
export interface OptionProblem {
  key: string;
  message: string;
}

/** What is wrong with `options` for a gluster Volume of `replicas` bricks, one problem per bad key. */
export function glusterOptionProblems(options: Readonly<Record<string, string>>, replicas: number): OptionProblem[] {
  const problems: OptionProblem[] = [];
  for (const [key, value] of Object.entries(options)) {
    const option = GLUSTER_OPTIONS[key];
    if (!option) problems.push({ key, message: `unsupported option "${key}": supported are ${Object.keys(GLUSTER_OPTIONS).join(', ')} (docs/volumes.md)` });
    else if (!option.valid(value)) problems.push({ key, message: `${JSON.stringify(value)} is not valid for ${key}: use ${option.accepts}` });
    else if (key === 'cluster.quorum-count' && Number(value) > replicas) problems.push({ key, message: `${key} ${value} is more than the volume's ${replicas} bricks: writes could never reach quorum` });
  }
  // AFR reads one only with the other: fixed without a count turns quorum off (split-brain), and a count under another type is ignored.
  const type = options['cluster.quorum-type'];
  const count = options['cluster.quorum-count'];
  if (type === 'fixed' && count === undefined) problems.push({ key: 'cluster.quorum-type', message: 'cluster.quorum-type fixed needs cluster.quorum-count (the bricks a write needs); without it GlusterFS turns quorum off' });
  if (count !== undefined && type !== 'fixed') problems.push({ key: 'cluster.quorum-count', message: `cluster.quorum-count counts only under cluster.quorum-type fixed (GlusterFS ignores it under ${type ?? 'the default, auto'}): set cluster.quorum-type to fixed, or remove the count` });
  return problems;
}

/** Every supported option's value for a Volume: its own, else the default. */
export function effectiveGlusterOptions(options: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(GLUSTER_OPTIONS).map(([key, o]) => [key, options?.[key] ?? o.default]));
}
