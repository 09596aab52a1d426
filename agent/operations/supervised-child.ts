/**
 * One worker process under supervision: started as the leader of its own
 * process group (detached), so that a timeout, a cancellation or the agent's
 * shutdown reaches everything the worker started — SIGTERM to the group,
 * SIGKILL to the group after a grace period. When the worker exits, its
 * group gets a SIGKILL sweep as well: an operation leaves no process behind
 * (instances are not hit: their shims run in sessions of their own).
 * Event-loop driven; `done` settles once, after the worker exited and its
 * pipes closed.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { ErrorReason } from '../../api/workitem.js';

/** Bytes of stdout kept (the result line is small) and of unparsed stderr kept for crash reports. */
const STDOUT_LIMIT = 1 << 20;
const STDERR_TAIL = 4096;

/** Why the supervisor ended a worker. */
export interface Termination {
  reason: Extract<ErrorReason, 'Timeout' | 'Cancelled'>;
  message: string;
}

/** How a supervised worker ended. */
export interface ChildOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** The end of stderr lines that were not log lines. */
  stderrTail: string;
  /** Set when the supervisor terminated the worker. */
  terminated?: Termination;
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** A worker process in its own process group. */
export class SupervisedChild {
  /** Pid of the worker, also its process group id. */
  readonly pid: number;
  /** Settles when the worker has exited and its pipes have closed. */
  readonly done: Promise<ChildOutcome>;
  private terminated: Termination | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;

  /** Starts `command args`; `onLine` gets each stderr line and says whether it consumed it; throws when it cannot start. */
  constructor(command: string, args: string[], private readonly onLine: (line: string) => boolean) {
    this.child = spawn(command, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.on('error', () => undefined);
    if (this.child.pid === undefined) throw new Error(`cannot start ${command}`);
    this.pid = this.child.pid;
    this.done = this.watch();
  }

  /** Writes the request and closes stdin. */
  send(input: string): void {
    this.child.stdin.on('error', () => undefined);
    this.child.stdin.end(input);
  }

  /** SIGTERM to the worker's group now, SIGKILL after `graceMs`; the first termination's reason wins, and a worker that already exited is left alone. */
  terminate(termination: Termination, graceMs: number): void {
    if (this.terminated || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.terminated = termination;
    killGroup(this.pid, 'SIGTERM');
    this.killTimer = setTimeout(() => killGroup(this.pid, 'SIGKILL'), graceMs);
  }

  private watch(): Promise<ChildOutcome> {
    let stdout = '';
    let stderrTail = '';
    let partial = '';
    this.child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < STDOUT_LIMIT) stdout += d.toString('utf8');
    });
    this.child.stderr.on('data', (d: Buffer) => {
      const lines = (partial + d.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line && !this.onLine(line)) stderrTail = (stderrTail + line + '\n').slice(-STDERR_TAIL);
    });
    this.child.on('exit', () => {
      clearTimeout(this.killTimer);
      killGroup(this.pid, 'SIGKILL');
    });
    return new Promise((resolve) => {
      this.child.on('close', (exitCode, signal) => {
        if (partial && !this.onLine(partial)) stderrTail = (stderrTail + partial).slice(-STDERR_TAIL);
        resolve({ exitCode, signal, stdout, stderrTail, ...(this.terminated ? { terminated: this.terminated } : {}) });
      });
    });
  }
}
