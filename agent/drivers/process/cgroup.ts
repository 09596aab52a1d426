/**
 * cpu and memory limits of process instances through cgroup v2, when the
 * agent may use it. The agent puts each instance in
 * <root>/cairn/<namespace>_<name> with cpu.max and memory.max; the shim moves
 * itself there before it runs the command, so every process of the instance
 * is inside from its first instruction. Where this cannot work — no cgroup2
 * mount, a hybrid host whose cgroup2 hierarchy lacks the cpu or memory
 * controller (they are bound to v1), or no permission — the result says so
 * and the instance runs without limits (WorkItemInstanceStatus.limitsEnforced
 * false, with the reason in a condition). Runs in workers; no shared state.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Controllers the agent needs in the hierarchy. */
const CONTROLLERS = ['cpu', 'memory'] as const;
/** The cpu.max period (µs). */
const CPU_PERIOD_US = 100_000;

/** Whether an instance's limits are enforced, why not, and its cgroup. */
export interface CgroupPlacement {
  enforced: boolean;
  message: string;
  /** The instance's cgroup directory, when enforced. */
  dir?: string;
}

/** Mount point of the first cgroup2 filesystem in the text of /proc/self/mounts. */
export function cgroup2MountPoint(mountsText: string): string | undefined {
  for (const line of mountsText.split('\n')) {
    const [, mountPoint, fsType] = line.split(' ');
    if (fsType === 'cgroup2' && mountPoint) return mountPoint.replace(/\\040/g, ' ');
  }
  return undefined;
}

/** The cpu.max line for a number of cpus, e.g. 1.5 → "150000 100000". */
export function cpuMax(cpus: number): string {
  return `${Math.max(1000, Math.round(cpus * CPU_PERIOD_US))} ${CPU_PERIOD_US}`;
}

async function enableControllers(dir: string): Promise<void> {
  const enabled = (await fs.promises.readFile(path.join(dir, 'cgroup.subtree_control'), 'utf8')).split(/\s+/);
  if (CONTROLLERS.every((c) => enabled.includes(c))) return;
  await fs.promises.writeFile(path.join(dir, 'cgroup.subtree_control'), CONTROLLERS.map((c) => `+${c}`).join(' '));
}

async function findRoot(configured: string | undefined): Promise<string | undefined> {
  return configured ?? cgroup2MountPoint(await fs.promises.readFile('/proc/self/mounts', 'utf8'));
}

/** Creates the cgroup of one instance with its limits, or says why limits cannot be enforced. */
export async function prepareCgroup(configuredRoot: string | undefined, leaf: string, limits: { cpus: number; memoryBytes: number }): Promise<CgroupPlacement> {
  const root = await findRoot(configuredRoot);
  const off = (why: string): CgroupPlacement => ({ enforced: false, message: `${why}; cpu and memory limits are not enforced` });
  if (!root) return off('no cgroup v2 hierarchy is mounted on this node');
  let available: string[];
  try {
    available = (await fs.promises.readFile(path.join(root, 'cgroup.controllers'), 'utf8')).split(/\s+/);
  } catch (err) {
    return off(`cannot read the cgroup v2 hierarchy at ${root}: ${(err as Error).message}`);
  }
  const missing = CONTROLLERS.filter((c) => !available.includes(c));
  if (missing.length > 0) return off(`the cgroup v2 hierarchy at ${root} does not offer the ${missing.join(', ')} controller(s) (on a hybrid host they belong to cgroup v1)`);
  const parent = path.join(root, 'cairn');
  const dir = path.join(parent, leaf);
  try {
    await enableControllers(root);
    await fs.promises.mkdir(parent, { recursive: true });
    await enableControllers(parent);
    await fs.promises.mkdir(dir, { recursive: true });
    await fs.promises.writeFile(path.join(dir, 'cpu.max'), cpuMax(limits.cpus));
    await fs.promises.writeFile(path.join(dir, 'memory.max'), String(limits.memoryBytes));
    await noSwap(dir);
  } catch (err) {
    return off(`cannot set up cgroup ${dir}: ${(err as Error).message}`);
  }
  return { enforced: true, message: `cpu.max ${cpuMax(limits.cpus)}, memory.max ${limits.memoryBytes} in ${dir}`, dir };
}

/**
 * memory.max bounds RAM only: on a node with swap an instance went past its limit into swap, never
 * OOM-killed, while its status said the limit was enforced. A kernel without swap accounting has no
 * memory.swap.max, and nothing to bound.
 */
async function noSwap(dir: string): Promise<void> {
  try {
    await fs.promises.writeFile(path.join(dir, 'memory.swap.max'), '0', { flag: 'r+' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Removes an instance's cgroup once its processes are gone; a missing one is fine. */
export async function removeCgroup(dir: string): Promise<void> {
  try {
    await fs.promises.rmdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
