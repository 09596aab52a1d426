/**
 * What the agent remembers across restarts without the apiserver: the last
 * version of every WorkItem addressed to this node, and its fencing term
 * (when the node lease was last renewed, and the instances claimed in it). Written atomically (temp file, fsync, rename) at
 * most once per flush interval, so a kill -9 loses at most that interval
 * and never leaves a torn file. A restarted agent that cannot reach the
 * apiserver reconciles from this copy: it re-adopts running instances and
 * keeps them running until their fencing deadline.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WorkItem } from '../api/workitem.js';
import { writeJsonAtomicSync } from './drivers/process/state.js';
import type { FenceRecord } from './fencing/node-fence.js';

interface StoreFile {
  workItems: WorkItem[];
}

/** The fencing term of the last run, and the keys of the instances claimed in it. */
export interface StoredFence extends FenceRecord {
  claimed: string[];
}

/** The agent's persisted copy of its WorkItems. */
export class LocalStore {
  private readonly items = new Map<string, WorkItem>();
  private fence: StoredFence | undefined;
  private dirty = false;
  private fenceDirty = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string,
    /** The term lives in its own small file: it changes every few seconds, the WorkItems rarely. */
    private readonly fenceFile = `${file}.fencing`,
    private readonly flushMs = 1000,
  ) {}

  /** The store files under a data dir. */
  static at(dataDir: string): LocalStore {
    return new LocalStore(path.join(dataDir, 'workitems.json'), path.join(dataDir, 'fencing.json'));
  }

  /** Loads the file if it exists (a corrupt file is set aside, not fatal). */
  load(): void {
    let parsed: StoreFile;
    try {
      parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as StoreFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') fs.renameSync(this.file, `${this.file}.corrupt-${Date.now()}`);
      return;
    }
    for (const w of parsed.workItems ?? []) this.items.set(keyOf(w), w);
    try {
      const fence = JSON.parse(fs.readFileSync(this.fenceFile, 'utf8')) as Partial<StoredFence>;
      this.fence = typeof fence.lastRenewAt === 'number' && typeof fence.term === 'string' ? { claimed: [], acquiredAt: '', ...fence } as StoredFence : undefined;
    } catch {
      // none yet, or torn: a new term then begins, which only fences earlier
      this.fence = undefined;
    }
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
    this.markDirty();
  }

  /** Forgets a WorkItem (it is gone and cleaned up). */
  delete(key: string): void {
    if (this.items.delete(key)) this.markDirty();
  }

  /** The fencing term of the last run. */
  get storedFence(): StoredFence | undefined {
    return this.fence;
  }

  /** Records the fencing term and its claims (persisted with the next flush, and only when they changed). */
  setFence(record: FenceRecord | undefined, claimed: string[]): void {
    const fence = record && { ...record, claimed };
    if (JSON.stringify(fence) === JSON.stringify(this.fence)) return;
    this.fence = fence;
    this.fenceDirty = true;
    this.scheduleFlush();
  }

  /** Writes now what changed. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dirty) {
      this.dirty = false;
      writeJsonAtomicSync(this.file, { workItems: this.list() } satisfies StoreFile);
    }
    if (this.fenceDirty) {
      this.fenceDirty = false;
      writeJsonAtomicSync(this.fenceFile, this.fence ?? {});
    }
  }

  private markDirty(): void {
    this.dirty = true;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    this.timer ??= setTimeout(() => this.flush(), this.flushMs).unref();
  }
}

/** namespace/name of a WorkItem. */
export function keyOf(w: WorkItem): string {
  return `${w.metadata.namespace}/${w.metadata.name}`;
}
