/**
 * Process identity from /proc. A pid alone is not an identity: pids are
 * recycled. (pid, start time in clock ticks since boot, boot id) is: the
 * kernel never gives two processes of one boot the same pid and start time.
 * Zombies count as dead, because on a node whose init does not reap orphans
 * (containers) an exited instance stays a zombie forever. Reads are single
 * small files, cheap enough to poll hundreds of instances.
 */
import fs from 'node:fs';

/** The fields of /proc/<pid>/stat that the agent uses. */
export interface ProcStat {
  pid: number;
  /** R, S, D, Z, T, ... (field 3). */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Start time in clock ticks after boot (field 22). */
  startTicks: number;
}

/** Linux's USER_HZ, the unit of /proc start times, 100 on every architecture Node runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** Parses the text of /proc/<pid>/stat; the command name may contain spaces and parentheses. */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`malformed /proc stat line: ${text.slice(0, 80)}`);
  const rest = text.slice(close + 2).trim().split(' ');
  const num = (i: number) => Number(rest[i]);
  const stat = { pid: Number(text.slice(0, open).trim()), state: rest[0] ?? '', ppid: num(1), pgrp: num(2), session: num(3), startTicks: num(19) };
  if (!Number.isSafeInteger(stat.pid) || !Number.isSafeInteger(stat.startTicks)) throw new Error(`malformed /proc stat line: ${text.slice(0, 80)}`);
  return stat;
}

/** Whether a process in this state is running (not a zombie, not dead). */
export function isLive(stat: ProcStat | undefined): stat is ProcStat {
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X' && stat.state !== 'x';
}

/**
 * /proc/<pid>/stat, or undefined when there is no such process. Synchronous
 * on purpose: a read of /proc costs microseconds, far less than a round trip
 * through the thread pool, and it reads a just-spawned child before the
 * event loop can reap it.
 */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ESRCH') return undefined;
    throw err;
  }
}

/** The argv of `pid`, or undefined when there is no such process. */
export function commandLine(pid: number): string[] | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return undefined;
  }
}

/** The pids of `pid`'s children; [] when it is gone. */
export function childPids(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch (err) {
    // A kernel built without CONFIG_PROC_CHILDREN has no such file.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' && fs.existsSync(`/proc/${pid}`) ? childPidsByScan(pid) : [];
  }
}

/** The pids of `pid`'s children, found by reading every process's parent (childPids without the kernel's list). */
export function childPidsByScan(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((p) => readProcStat(p)?.ppid === pid);
}

/** Live processes whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map((e) => readProcStat(Number(e)))
    .filter((s) => isLive(s) && s.pgrp === pgid)
    .map((s) => s!.pid);
}

let cachedBootId: string | undefined;
let cachedBootTimeMs: number | undefined;

/** This boot's id; start ticks of one boot mean nothing in another. */
export function bootId(): string {
  cachedBootId ??= fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return cachedBootId;
}

/** Wall-clock time of this boot, from the btime line of /proc/stat. */
export function bootTimeMs(): number {
  if (cachedBootTimeMs === undefined) {
    const line = /^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'));
    if (!line) throw new Error('/proc/stat has no btime line');
    cachedBootTimeMs = Number(line[1]) * 1000;
  }
  return cachedBootTimeMs;
}

/** The wall-clock start time of a process with these start ticks, as RFC 3339. */
export function startTimeIso(startTicks: number): string {
  return new Date(bootTimeMs() + (startTicks * 1000) / CLOCK_TICKS_PER_SECOND).toISOString();
}
