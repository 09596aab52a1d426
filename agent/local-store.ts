/**
 * What the agent remembers across restarts without the apiserver: the last
 * version of every WorkItem addressed to this node and the fencing term its
 * instance was last claimed in, one file each under
 * <data-dir>/workitems/<namespace>/<name>.json, and the node's fencing term
 * (when the node lease was last renewed) in <data-dir>/fencing.json. Each file is written atomically (temp file,
 * rename), so a kill -9 never leaves a torn one; not fsynced: only a crash
 * of the whole machine loses a write, and that also ends every instance
 * (and a new boot adopts none). A flush writes only what changed since the
 * last one, so an operation costs one small file, whatever the number of
 * WorkItems. A restarted agent that cannot reach the
 * apiserver reconciles from this copy: it re-adopts running instances and
 * keeps them running within its fencing term.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WorkItem } from '../api/workitem.js';
import type { FenceRecord, NodeFence } from './fencing/node-fence.js';

/** One WorkItem's file: the WorkItem, and the node term its instance was claimed in (none: not claimed). */
interface ItemFile {
  workItem: WorkItem;
  claimedTerm?: string;
}

/** The agent's persisted copy of its WorkItems. */
export class LocalStore {
  private readonly items = new Map<string, WorkItem>();
  private readonly claimTerms = new Map<string, string>();
  /** Keys written or deleted since the last flush. */
  private readonly dirty = new Set<string>();
  private fence: FenceRecord | undefined;
  private fenceDirty = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string,
    private readonly fenceFile: string,
    private readonly flushMs = 1000,
    private readonly onFlushError: (err: Error) => void = () => undefined,
  ) {}

  /** The store under a data dir; `onFlushError` hears of a background flush that failed (it is retried). */
  static at(dataDir: string, onFlushError?: (err: Error) => void): LocalStore {
    return new LocalStore(path.join(dataDir, 'workitems'), path.join(dataDir, 'fencing.json'), 1000, onFlushError);
  }

  /** Loads what a previous run left (a corrupt file is set aside, not fatal). */
  load(): void {
    for (const file of this.files()) {
      try {
        const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as ItemFile | WorkItem;
        // Agents before the claim term was kept with the WorkItem wrote the bare WorkItem.
        const { workItem, claimedTerm } = 'workItem' in parsed ? parsed : { workItem: parsed, claimedTerm: undefined };
        this.items.set(keyOf(workItem), workItem);
        if (claimedTerm) this.claimTerms.set(keyOf(workItem), claimedTerm);
      } catch {
        fs.renameSync(file, `${file}.corrupt-${Date.now()}`);
      }
    }
    this.fence = readFence(this.fenceFile);
  }

  /** Every remembered WorkItem. */
  list(): WorkItem[] {
    return [...this.items.values()];
  }

  /** The remembered WorkItem with this key. */
  get(key: string): WorkItem | undefined {
    return this.items.get(key);
  }

  /** Remembers the latest version of a WorkItem. */
  put(w: WorkItem): void {
    const key = keyOf(w);
    const known = this.items.get(key);
    // Liveness checks put the same version every few seconds: only a new version is worth a write.
    if (known && known.metadata.resourceVersion === w.metadata.resourceVersion && known.metadata.uid === w.metadata.uid) return;
    this.items.set(key, w);
    this.markDirty(key);
  }

  /** Forgets a WorkItem (it is gone and cleaned up). */
  delete(key: string): void {
    this.claimTerms.delete(key);
    if (this.items.delete(key)) this.markDirty(key);
  }

  /** The fencing term of the last run. */
  get storedFence(): FenceRecord | undefined {
    return this.fence;
  }

  /** Keys of the remembered WorkItems whose instances were claimed in `term`. */
  claimedIn(term: string): string[] {
    return [...this.claimTerms].filter(([, t]) => t === term).map(([key]) => key);
  }

  /**
   * Records that key's instance was claimed in `term`, or no longer is (undefined). Kept in the
   * WorkItem's own file, so a claim costs one small write, whatever the number of instances.
   */
  recordClaim(key: string, term: string | undefined): void {
    if (this.claimTerms.get(key) === term) return;
    if (term) this.claimTerms.set(key, term);
    else this.claimTerms.delete(key);
    if (!this.items.has(key)) return;
    this.markDirty(key);
    // A claim given up is on disk before it is given up through the API (the caller's next step): a restart
    // within the flush delay would otherwise take back a claim that another node holds by then.
    if (!term) this.flush();
  }

  /** Records the node's current fencing term (persisted with the next flush, and only when it changed). */
  recordFence(nodeFence: Pick<NodeFence, 'record'>): void {
    const fence = nodeFence.record();
    if (JSON.stringify(fence) === JSON.stringify(this.fence)) return;
    this.fence = fence;
    this.fenceDirty = true;
    this.scheduleFlush();
  }

  /** Writes now what changed. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const key of this.dirty) {
      const file = this.fileOf(key);
      const w = this.items.get(key);
      const claimedTerm = this.claimTerms.get(key);
      if (w) writeAtomic(file, JSON.stringify({ workItem: w, ...(claimedTerm ? { claimedTerm } : {}) } satisfies ItemFile));
      else fs.rmSync(file, { force: true });
    }
    this.dirty.clear();
    if (this.fenceDirty) {
      this.fenceDirty = false;
      writeAtomic(this.fenceFile, JSON.stringify(this.fence ?? {}));
    }
  }

  private fileOf(key: string): string {
    const [namespace, name] = key.split('/');
    return path.join(this.dir, namespace!, `${name}.json`);
  }

  private files(): string[] {
    if (!fs.existsSync(this.dir)) return [];
    return fs.readdirSync(this.dir).flatMap((ns) => fs.readdirSync(path.join(this.dir, ns)).filter((f) => f.endsWith('.json')).map((f) => path.join(this.dir, ns, f)));
  }

  private markDirty(key: string): void {
    this.dirty.add(key);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    this.timer ??= setTimeout(() => this.flushInBackground(), this.flushMs).unref();
  }

  // In a timer nothing would catch a failure (a full or read-only disk) but the process's end: report it
  // and try again; what was not written stays dirty.
  private flushInBackground(): void {
    try {
      this.flush();
    } catch (err) {
      this.onFlushError(err as Error);
      this.scheduleFlush();
    }
  }
}

/** Writes `text` to `file` through a temp file and a rename (a kill -9 never leaves a torn file), making its directory when missing. */
export function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  try {
    fs.writeFileSync(tmp, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, text);
  }
  fs.renameSync(tmp, file);
}

/** The fencing term file; none yet, or torn: a new term then begins, which only fences earlier. */
function readFence(file: string): FenceRecord | undefined {
  try {
    const fence = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<FenceRecord>;
    return typeof fence.lastRenewAt === 'number' && typeof fence.term === 'string' ? ({ acquiredAt: '', ...fence } as FenceRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** namespace/name of a WorkItem. */
export function keyOf(w: WorkItem): string {
  return `${w.metadata.namespace}/${w.metadata.name}`;
}
