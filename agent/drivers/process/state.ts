/**
 * The on-disk record of one process instance, state.json in its directory,
 * and the exit file its shim writes. state.json is replaced atomically
 * (write a temp file, fsync, rename, fsync the directory), so a reader — the
 * agent's observe(), a worker after an agent crash — sees the old record or
 * the new one, never half of one. Only workers write it, one at a time per
 * instance (the runner refuses concurrent operations on one WorkItem).
 */
import fs from 'node:fs';
import path from 'node:path';
import { OperationError } from '../../operations/errors.js';
import type { ProcStat } from './proc.js';
import { isLive } from './proc.js';

/** How the last run of an instance ended, once the agent has recorded it. */
export interface ExitRecord {
  /** Exit status; 128+n when killed by signal n; undefined when unknown. */
  code?: number;
  signal?: string;
  /** Epoch ms. */
  at: number;
}

/** The incoming side of a live migration, on the target node. */
export interface IncomingRecord {
  id: string;
  address: string;
  port: number;
  nbdPort?: number;
  /** Epoch ms the guest was resumed here (QMP cont). */
  resumedAt?: number;
}

/** The outgoing side of a live migration, on the source node. */
export interface OutgoingRecord {
  id: string;
  /** Epoch ms the transfer (or the storage mirror before it) started. */
  startedAt: number;
  /** Epoch ms the memory transfer (QMP migrate) started, after any storage mirror. */
  transferAt?: number;
  /** Set when qemu completed the migration and quit here. */
  completed?: { downtimeMs: number; totalTimeMs: number; bytesTransferred?: number; finishedAt: number };
  /** Set when the migration failed or was cancelled; the guest kept running here. */
  failed?: { message: string; at: number };
}

/** What a VM adds to state.json. */
export interface VmRecord {
  accelerator: 'kvm' | 'tcg';
  /** qemu's own pid (the shim's child) and start ticks, from its pid file. */
  pid?: number;
  startTicks?: number;
  /** Size of the console log when this run started: the readiness marker is looked for after it. */
  logOffset: number;
  incoming?: IncomingRecord;
  outgoing?: OutgoingRecord;
}

/** state.json: which process is the instance, and its restart bookkeeping. */
export interface ProcessState {
  version: 1;
  /** Pid of the shim: session leader and process group id of the instance. */
  pid: number;
  /** /proc/<pid>/stat field 22 of the shim at launch. */
  startTicks: number;
  bootId: string;
  /** Epoch ms of the launch. */
  startedAt: number;
  /** Size of console.log when this run started: `cairn logs` shows from here, `--previous` what is before. */
  logOffset?: number;
  restarts: number;
  /** Consecutive quick exits, for the restart backoff. */
  backoffCount: number;
  restartToken?: string;
  specHash: string;
  /** Stopped on purpose (runState Stopped); never restarted by policy. */
  stopped: boolean;
  limitsEnforced: boolean;
  limitsMessage: string;
  /** The instance's cgroup directory, when limits are enforced. */
  cgroup?: string;
  /** Set once the agent has seen this run end. */
  exit?: ExitRecord;
  /** How the run before this one ended, for lastExitCode/lastSignal while this one runs. */
  previousExit?: ExitRecord;
  /** The VM of a qemu instance. */
  vm?: VmRecord;
}

/** File names inside an instance directory. */
export const STATE_FILE = 'state.json';
/** Written by the shim when the command ends: "<shim pid> <status>". */
export const EXIT_FILE = 'exit';
/** stdout and stderr of the instance. */
export const LOG_FILE = 'console.log';

/** Whether `stat` is the very process `state` launched (same pid, start time and boot), and still alive. */
export function isSameProcess(state: Pick<ProcessState, 'pid' | 'startTicks' | 'bootId'>, stat: ProcStat | undefined, currentBootId: string): boolean {
  return state.bootId === currentBootId && isLive(stat) && stat.pid === state.pid && stat.startTicks === state.startTicks;
}

/** Writes `value` as JSON to `file` atomically and durably. */
export function writeJsonAtomicSync(file: string, value: unknown): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o644);
  try {
    fs.writeFileSync(fd, `${JSON.stringify(value, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  const dirFd = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}

/** The instance's state.json, undefined when there is none; a corrupt one is an error, never silently ignored. Synchronous: a small local file, read on every liveness poll. */
export function readState(dir: string): ProcessState | undefined {
  const file = path.join(dir, STATE_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const state = JSON.parse(text) as ProcessState;
    if (state.version !== 1 || !Number.isSafeInteger(state.pid) || !Number.isSafeInteger(state.startTicks)) throw new Error('unexpected content');
    return state;
  } catch (err) {
    throw new OperationError(
      'Unknown',
      `state file ${file} is corrupt: ${(err as Error).message}`,
      `make sure no copy of the instance still runs (ps -s <pid>), then delete ${file}`,
      { cause: err },
    );
  }
}

/** Writes the instance's state.json atomically. */
export function writeState(dir: string, state: ProcessState): void {
  writeJsonAtomicSync(path.join(dir, STATE_FILE), state);
}

/**
 * The exit status the shim of `pid` wrote, and when (the file's mtime: the exit itself, not when the agent
 * noticed it, which may be a sweep or an agent restart later); undefined when it has not written one (or the
 * file is another run's).
 */
export function readExit(dir: string, pid: number): { code: number; atMs: number } | undefined {
  const file = path.join(dir, EXIT_FILE);
  try {
    const m = /^(\d+) (\d+)\s*$/.exec(fs.readFileSync(file, 'utf8'));
    return m && Number(m[1]) === pid ? { code: Number(m[2]), atMs: fs.statSync(file).mtimeMs } : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
