/**
 * GlusterFS volfiles for a replicated Volume, run without glusterd (issue
 * 14, docs/volumes.md): one brick volfile per replica, the FUSE client's
 * and the self-heal daemon's. Pure text from the layout: the controller
 * writes them into WorkItems, agents only run them. The graphs follow
 * glusterd's volgen (glusterd-volgen.c) and Kadalu's templates, minus what
 * needs glusterd (portmap, quota, changelog):
 *   brick:  posix → [arbiter] → locks → io-threads → index → io-stats → protocol/server
 *   client: protocol/client × n → cluster/replicate → write-behind → io-stats
 *   shd:    protocol/client × n → cluster/replicate (iam-self-heal-daemon) → io-stats
 * Names that must agree across them: the clients are `<volume>-client-<i>`,
 * replicate's afr-pending-xattr lists exactly those, and every brick's index
 * watches the `trusted.afr.<volume>-` prefix of the xattrs they become.
 */
import { createHash } from 'node:crypto';
import { GLUSTER_OPTIONS, type OptionTarget } from '../../../api/gluster-options.js';
import type { BrickPlacement, VolumeSpec } from '../../../api/volume.js';

/** Everything the volfiles depend on. */
export interface GlusterLayout {
  /** The Gluster volume name: letters, digits, '-' and '_' (it prefixes xattr and volume names). */
  volume: string;
  /** A UUID, stamped on each brick root (trusted.glusterfs.volume-id) so a brick never joins another volume. */
  volumeId: string;
  /** One per brick: where it runs and listens, in replica order. */
  bricks: BrickPlacement[];
  /** Replica 3 whose third brick holds names and metadata only. */
  arbiter?: boolean;
  /** The Volume's spec.options (api/gluster-options.ts): they shape the client's and the self-heal daemon's graphs. */
  options?: Readonly<Record<string, string>>;
}

/**
 * A layout with what the Volume's spec adds to every graph: the arbiter (replica 3 only) and spec.options.
 * Every volfile of one Volume is made from such a layout, so the bricks' daemons and each node's mount
 * agree on the replica set (arbiter-count) and the options (ping-timeout, quorum).
 */
export function specLayout(spec: Pick<VolumeSpec, 'arbiter' | 'options'>, base: Omit<GlusterLayout, 'arbiter' | 'options'>): GlusterLayout {
  return { ...base, arbiter: spec.arbiter === true && base.bricks.length === 3, ...(spec.options ? { options: spec.options } : {}) };
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** The volfile of brick `index`. */
export function brickVolfile(l: GlusterLayout, index: number): string {
  check(l);
  const b = l.bricks[index];
  if (!b) throw new RangeError(`volume ${l.volume} has no brick ${index}`);
  return oneBrickVolfile(l.volume, l.volumeId, b, l.arbiter === true && index === l.bricks.length - 1);
}

/** The volfile of one brick, which depends on no other: what the controller writes into the brick's WorkItem. */
export function oneBrickVolfile(volumeName: string, volumeId: string, b: BrickPlacement, arbiter = false): string {
  check({ volume: volumeName, volumeId, bricks: [b] });
  const v = volumeName;
  return graph([
    ['posix', 'storage/posix', { directory: b.path, 'volume-id': volumeId }],
    ...(arbiter ? [['arbiter', 'features/arbiter', {}] as Layer] : []),
    ['locks', 'features/locks', {}],
    ['io-threads', 'performance/io-threads', {}],
    ['index', 'features/index', { 'index-base': `${b.path}/.glusterfs/indices`, 'xattrop-dirty-watchlist': 'trusted.afr.dirty', 'xattrop-pending-watchlist': `trusted.afr.${v}-` }],
    // Named after the brick path: clients ask for it by that name (remote-subvolume must be a path).
    [b.path, 'debug/io-stats', { 'unique-id': b.path }, true],
    ['server', 'protocol/server', { 'transport-type': 'tcp', 'transport.address-family': 'inet', 'transport.socket.listen-port': String(b.port), [`auth.addr.${b.path}.allow`]: '*' }],
  ], v);
}

/** The Gluster volume name of a Cairn Volume: its cluster and name (dots, which a volume name cannot hold, become '_'). */
export function glusterVolumeName(namespace: string, name: string): string {
  return `${namespace}-${name}`.replace(/\./g, '_');
}

/**
 * The FUSE client's volfile. Its top translator is named after the volume and its bricks' ports: a mount
 * given a new volfile only reconfigures a graph of the same shape, and protocol/client reconnects on a new
 * remote-host or remote-subvolume but not on a new remote-port. A brick placed again on its node with
 * another port would stay unreachable to every running mount; the new name makes it a new graph instead,
 * which the mount switches to under its open files.
 */
export function clientVolfile(l: GlusterLayout): string {
  const writeBehind: Layer[] = l.options?.['performance.write-behind'] === 'off' ? [] : [['write-behind', 'performance/write-behind', optionsFor(l, 'writeBehind')]];
  const ports = createHash('sha256').update(l.bricks.map((b) => b.port).join(',')).digest('hex').slice(0, 8);
  // features/utime, as glusterd loads it: the client's times go to every brick (trusted.glusterfs.mdata), so a
  // file's mtime and ctime do not change with the brick a stat happens to read ("file changed as we read it").
  const utime: Layer = ['utime', 'features/utime', { noatime: 'on' }];
  return clientGraph(l, {}, [utime, ...writeBehind, [`${l.volume}-ports-${ports}`, 'debug/io-stats', optionsFor(l, 'clientIoStats'), true]]);
}

/**
 * The self-heal daemon's volfile: it crawls the bricks' indices and heals what they list, at once when a
 * brick comes back (AFR's child-up), and else every 600 s as glusterd's default. A shorter crawl slows
 * writes: each crawl inspects, with locks, the files being written, and the writer loses its eager lock
 * (a 10 s crawl cost 15% of the sequential write rate in hack/bench/gluster-bench.ts).
 */
export function shdVolfile(l: GlusterLayout): string {
  const heal = { 'iam-self-heal-daemon': 'yes', 'self-heal-daemon': 'on', 'heal-timeout': '600', 'data-self-heal': 'on', 'metadata-self-heal': 'on', 'entry-self-heal': 'on' };
  return clientGraph(l, { ...heal, ...optionsFor(l, 'shdReplicate') }, [[`${l.volume}-shd`, 'debug/io-stats', {}, true]]);
}

/** The translator options the layout's spec.options set at one kind of target, keyed by translator option. */
function optionsFor(l: GlusterLayout, kind: DistributiveKeys<OptionTarget>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(l.options ?? {})) {
    const target = GLUSTER_OPTIONS[key]?.target as Record<string, unknown> | undefined;
    const option = target?.[kind];
    if (typeof option === 'string') out[option] = value;
  }
  return out;
}

type DistributiveKeys<T> = T extends unknown ? keyof T : never;

/** [name (prefixed with the volume unless `bare`), type, options, bare] */
type Layer = [string, string, Record<string, string>, boolean?];

function clientGraph(l: GlusterLayout, replicateOptions: Record<string, string>, top: Layer[]): string {
  check(l);
  const clients = l.bricks.map((_, i) => `client-${i}`);
  const replicate: Record<string, string> = {
    'afr-pending-xattr': clients.map((c) => `${l.volume}-${c}`).join(','),
    'quorum-type': 'auto',
    ...(l.arbiter ? { 'arbiter-count': '1' } : {}),
    ...optionsFor(l, 'replicate'),
    ...replicateOptions,
  };
  const clientVolumes = l.bricks.map((b, i) => volume(`${l.volume}-${clients[i]}`, 'protocol/client', { 'transport-type': 'tcp', 'transport.address-family': 'inet', 'remote-host': b.host, 'remote-port': String(b.port), 'remote-subvolume': b.path, 'ping-timeout': '42', ...optionsFor(l, 'client') }, []));
  const replicateName = `${l.volume}-replicate-0`;
  return [...clientVolumes, volume(replicateName, 'cluster/replicate', replicate, clients.map((c) => `${l.volume}-${c}`)), graph(top, l.volume, replicateName)].join('\n');
}

/** Layers bottom-up, each the only subvolume of the next; the last is the top of the graph. */
function graph(layers: Layer[], prefix: string, below?: string): string {
  const out: string[] = [];
  let under = below;
  for (const [name, type, options, bare] of layers) {
    const full = bare ? name : `${prefix}-${name}`;
    out.push(volume(full, type, options, under ? [under] : []));
    under = full;
  }
  return out.join('\n');
}

function volume(name: string, type: string, options: Record<string, string>, subvolumes: string[]): string {
  const lines = [`volume ${name}`, `    type ${type}`, ...Object.entries(options).map(([k, v]) => `    option ${k} ${v}`)];
  if (subvolumes.length > 0) lines.push(`    subvolumes ${subvolumes.join(' ')}`);
  return [...lines, 'end-volume', ''].join('\n');
}

function check(l: GlusterLayout): void {
  if (!NAME.test(l.volume)) throw new Error(`gluster volume name ${JSON.stringify(l.volume)}: use letters, digits, '-' and '_'`);
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(l.volumeId)) throw new Error(`volume ${l.volume}: volumeId ${l.volumeId} is not a UUID`);
  if (l.bricks.length < 1 || l.bricks.length > 3) throw new Error(`volume ${l.volume}: ${l.bricks.length} bricks; 1 to 3 are supported`);
  if (l.arbiter && l.bricks.length !== 3) throw new Error(`volume ${l.volume}: an arbiter needs exactly 3 bricks`);
  for (const b of l.bricks) {
    if (!b.path.startsWith('/') || /\s/.test(b.path)) throw new Error(`volume ${l.volume}: brick path ${JSON.stringify(b.path)} must be absolute, without spaces`);
  }
}
