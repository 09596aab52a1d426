/**
 * The agent's copy of the cluster metadata that concerns its node, kept so
 * that a lost etcd can be rebuilt from the agents (`cairn restore
 * --from-agents`, docs/restore.md). Next to the WorkItems local-store.ts
 * keeps, it holds, one file each under
 * <data-dir>/metadata/<plural>.<group>/<namespace or _>/<name>.json:
 *   - its Node and its Cluster, read at start and every NODE_REFRESH_MS (two GETs);
 *   - the Instances and Volumes its WorkItems are pieces of, read when one
 *     of their WorkItems changes (coalesced per owner), never polled: the
 *     node authorizer lets a node get them, not list or watch them;
 *   - its node lease after every renewal, and each instance claim when it is
 *     made (dropped when given up), so a restore continues the node's term.
 * Each file is the object as the apiserver served it, resourceVersion
 * included, so the restore can pick the freshest copy across agents; a file
 * is rewritten only when that version changed, atomically (temp + rename)
 * like local-store.ts. The volfiles need nothing more: a client volfile is
 * part of the spec of the instance WorkItems that mount the volume (kept by
 * local-store.ts, restored with them), and each mount keeps the one it was
 * made with in <data-dir>/gluster/<namespace>/mount-<volume>/client.vol
 * (gluster/mount-volfiles.ts); the controller regenerates them from the
 * Volumes kept here.
 *
 * Concurrency: everything runs on the agent's event loop; reads are
 * fire-and-forget promises whose failures only leave the previous copy.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { NodeCredential } from '../api/credentials.js';
import { hashToken, tokenId } from '../api/token-format.js';
import type { WorkItem } from '../api/workitem.js';
import { CREDENTIAL_FILE } from './credentials.js';
import { writeAtomic } from './local-store.js';

/** The folder of the metadata copy under an agent's data dir. */
export const METADATA_DIR = 'metadata';

/** A stored object as the copy keeps it (apiVersion, kind, metadata with resourceVersion). */
export interface CopiedObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** The kinds an agent keeps beside its WorkItems. */
export type CopiedKind = 'Node' | 'Cluster' | 'Instance' | 'Volume' | 'Lease';

const KINDS: Record<CopiedKind, { apiVersion: string; dir: string }> = {
  Node: { apiVersion: 'cairn.dev/v1alpha1', dir: 'nodes.cairn.dev' },
  Cluster: { apiVersion: 'cairn.dev/v1alpha1', dir: 'clusters.cairn.dev' },
  Instance: { apiVersion: 'cairn.dev/v1alpha1', dir: 'instances.cairn.dev' },
  Volume: { apiVersion: 'cairn.dev/v1alpha1', dir: 'volumes.cairn.dev' },
  Lease: { apiVersion: 'coordination.k8s.io/v1', dir: 'leases.coordination.k8s.io' },
};

/** The agent's persisted copy of its node's metadata. */
export class MetadataCopy {
  /** resourceVersion last written, by file. */
  private readonly written = new Map<string, string>();

  constructor(readonly dir: string) {}

  /** The copy under a data dir. */
  static at(dataDir: string): MetadataCopy {
    return new MetadataCopy(path.join(dataDir, METADATA_DIR));
  }

  /** Keeps `obj` (as the apiserver served it) unless this version is the one kept already. */
  save(kind: CopiedKind, served: object | undefined): void {
    const obj = served as CopiedObject | undefined;
    const name = obj?.metadata?.name;
    const rv = obj?.metadata?.resourceVersion;
    if (!obj || !name || !rv) return;
    const file = this.fileOf(kind, obj.metadata?.namespace, name);
    if (this.written.get(file) === rv) return;
    // Dates in client-node's typed objects (a Lease's renewTime) become RFC 3339 strings here.
    writeAtomic(file, JSON.stringify({ ...obj, apiVersion: KINDS[kind].apiVersion, kind }));
    this.written.set(file, rv);
  }

  /** Forgets one object (it is gone, or no longer this node's). */
  remove(kind: CopiedKind, namespace: string | undefined, name: string): void {
    const file = this.fileOf(kind, namespace, name);
    this.written.delete(file);
    fs.rmSync(file, { force: true });
  }

  private fileOf(kind: CopiedKind, namespace: string | undefined, name: string): string {
    return path.join(this.dir, KINDS[kind].dir, namespace ?? '_', `${name}.json`);
  }
}

/** Reads one object of the API; undefined when absent. */
export type ObjectReader = (kind: 'Instance' | 'Volume', namespace: string, name: string) => Promise<object | undefined>;

/** How long the owners of a changed WorkItem wait before being read: a burst of changes costs one GET per owner. */
const OWNER_READ_DELAY_MS = 2_000;

/**
 * Keeps the copies of the Instances and Volumes the node's WorkItems are
 * pieces of: an owner is read when one of its WorkItems changes, and
 * dropped once no WorkItem of the node refers to it.
 */
export class OwnerCopier {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly copy: MetadataCopy,
    private readonly read: ObjectReader,
    private readonly items: () => WorkItem[],
    private readonly onError: (err: unknown) => void,
  ) {}

  /** A WorkItem of the node changed (added, updated or deleted). */
  changed(w: WorkItem): void {
    this.pending.add(`${w.spec.owner.kind}/${w.metadata.namespace}/${w.spec.owner.name}`);
    this.timer ??= setTimeout(() => void this.flush(), OWNER_READ_DELAY_MS).unref();
  }

  /** Reads the pending owners and drops the copies nothing refers to any more. */
  async flush(): Promise<void> {
    this.timer = undefined;
    const owners = [...this.pending];
    this.pending.clear();
    const referred = new Set(this.items().map((w) => `${w.spec.owner.kind}/${w.metadata.namespace}/${w.spec.owner.name}`));
    for (const owner of owners) {
      const [kind, namespace, name] = owner.split('/') as ['Instance' | 'Volume', string, string];
      try {
        if (!referred.has(owner)) this.copy.remove(kind, namespace, name);
        else this.copy.save(kind, await this.read(kind, namespace, name));
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Stops a pending read. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** What one agent's data dir holds for a restore: every kept object, and what could not be read. */
export interface AgentDirCopy {
  dir: string;
  /** The node the dir belongs to (from its Node, WorkItems or credential); undefined when none says. */
  node: string | undefined;
  objects: CopiedObject[];
  /** Files that could not be read, with why. */
  problems: string[];
}

/** Reads an agent's data dir without changing it: the metadata copy, the WorkItems local-store.ts keeps, and the node credential as the Token it stands for. */
export function readAgentDir(dataDir: string): AgentDirCopy {
  const problems: string[] = [];
  const parse = (file: string): CopiedObject | undefined => {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as CopiedObject;
    } catch (err) {
      problems.push(`${file}: ${(err as Error).message}`);
      return undefined;
    }
  };
  const copied = jsonFiles(path.join(dataDir, METADATA_DIR), 2).map(parse);
  const items = jsonFiles(path.join(dataDir, 'workitems'), 1).map(parse).map((f) => (f && 'workItem' in f ? (f.workItem as CopiedObject) : f));
  const workItems: CopiedObject[] = items.filter((w): w is CopiedObject => !!w).map((w) => ({ apiVersion: 'cairn.dev/v1alpha1', kind: 'WorkItem', ...w }));
  const credential = readCredential(dataDir, problems);
  const objects = [...copied.filter((o): o is CopiedObject => !!o), ...workItems, ...(credential ? [credential.token] : [])];
  const node = objects.find((o) => o.kind === 'Node')?.metadata?.name ?? (workItems[0]?.spec as { nodeName?: string } | undefined)?.nodeName ?? credential?.nodeName;
  return { dir: dataDir, node, objects, problems };
}

/** Every *.json file `depth` folders below `dir` (none when it does not exist). */
function jsonFiles(dir: string, depth: number): string[] {
  if (!fs.existsSync(dir)) return [];
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  if (depth === 0) return entries.filter((e) => e.isFile() && e.name.endsWith('.json')).map((e) => path.join(dir, e.name));
  return entries.filter((e) => e.isDirectory()).flatMap((e) => jsonFiles(path.join(dir, e.name), depth - 1));
}

/**
 * The node credential in the data dir as the Token object the apiserver keeps for it (only its digest),
 * so an agent that joined with a join token authenticates again after a restore.
 */
function readCredential(dataDir: string, problems: string[]): { token: CopiedObject; nodeName: string } | undefined {
  const file = path.join(dataDir, CREDENTIAL_FILE);
  if (!fs.existsSync(file)) return undefined;
  try {
    const c = JSON.parse(fs.readFileSync(file, 'utf8')) as NodeCredential;
    const id = tokenId(c.token);
    if (!id) throw new Error('the token is not of the <id>.<secret> form');
    const labels = { 'auth.cairn.dev/cluster': c.cluster, 'auth.cairn.dev/node': c.nodeName };
    const spec = { type: 'node', secretHash: hashToken(c.token), cluster: c.cluster, nodeName: c.nodeName, expires: c.expires, description: `node credential of ${c.cluster}/${c.nodeName}, restored from its agent` };
    return { token: { apiVersion: 'auth.cairn.dev/v1alpha1', kind: 'Token', metadata: { name: id, labels }, spec }, nodeName: c.nodeName };
  } catch (err) {
    problems.push(`${file}: ${(err as Error).message}`);
    return undefined;
  }
}
