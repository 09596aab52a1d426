/**
 * One worker process under supervision, which carries operations one at a
 * time: a request line in on stdin, a result line out on stdout, log lines
 * on stderr. It is started as the leader of its own process group
 * (detached), so that a timeout, a cancellation or the agent's shutdown
 * reaches everything the worker started — SIGTERM to the group, SIGKILL to
 * the group after a grace period; a terminated worker is not used again.
 * When the worker exits, its group gets a SIGKILL sweep as well: an
 * operation leaves no process behind (instances are not hit: their shims run
 * in sessions of their own).
 * Event-loop driven; each request settles once, with the result line, or
 * with how the worker ended when it ended first.
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

/** How one request ended: its result line in `stdout`, or how the worker ended before writing one. */
export interface ChildOutcome {
  /** Set when the worker exited before the request's result. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** The end of stderr lines that were not log lines. */
  stderrTail: string;
  /** Set when the supervisor terminated the worker. */
  terminated?: Termination;
}

interface Pending {
  resolve(outcome: ChildOutcome): void;
  onLine(line: string): boolean;
  stderrTail: string;
}

// Called from the child's 'exit' handler and a timer, where a throw would end the agent: a group already
// gone (ESRCH) or one holding a process the agent may not signal (EPERM, in a container) is left as it is.
function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if (!['ESRCH', 'EPERM'].includes(String((err as NodeJS.ErrnoException).code))) throw err;
  }
}

/** A worker process in its own process group. */
export class SupervisedChild {
  /** Pid of the worker, also its process group id. */
  readonly pid: number;
  /** Settles when the worker has exited and its pipes have closed. */
  readonly done: Promise<void>;
  /** Requests sent so far. */
  served = 0;
  private terminated: Termination | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private pending: Pending | undefined;
  private exited = false;
  private stdout = '';
  private partial = '';
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;

  /** Starts `command args`; throws when it cannot start. */
  constructor(command: string, args: string[]) {
    this.child = spawn(command, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.on('error', () => undefined);
    if (this.child.pid === undefined) throw new Error(`cannot start ${command}`);
    this.pid = this.child.pid;
    this.child.stdin.on('error', () => undefined);
    this.done = this.watch();
  }

  /** Whether the worker can take another request (alive, not terminated, idle). */
  get reusable(): boolean {
    return !this.exited && !this.terminated && !this.pending;
  }

  /** Sends one request line; `onLine` gets each stderr line meanwhile and says whether it consumed it. */
  request(input: string, onLine: (line: string) => boolean): Promise<ChildOutcome> {
    if (!this.reusable) throw new Error(`worker ${this.pid} cannot take a request`);
    this.served++;
    return new Promise((resolve) => {
      this.pending = { resolve, onLine, stderrTail: '' };
      this.child.stdin.write(`${input.replace(/\n/g, ' ')}\n`);
    });
  }

  /** Closes stdin: an idle worker exits. */
  end(): void {
    this.child.stdin.end();
  }

  /** SIGTERM to the worker's group now, SIGKILL after `graceMs`; the first termination's reason wins, and a worker that already exited is left alone. */
  terminate(termination: Termination, graceMs: number): void {
    if (this.terminated || this.exited) return;
    this.terminated = termination;
    killGroup(this.pid, 'SIGTERM');
    this.killTimer = setTimeout(() => killGroup(this.pid, 'SIGKILL'), graceMs);
  }

  private settle(outcome: Omit<ChildOutcome, 'stderrTail' | 'terminated'>): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    p.resolve({ ...outcome, stderrTail: p.stderrTail, ...(this.terminated ? { terminated: this.terminated } : {}) });
  }

  private onStdout(d: Buffer): void {
    if (this.stdout.length < STDOUT_LIMIT) this.stdout += d.toString('utf8');
    const end = this.stdout.lastIndexOf('\n');
    if (end < 0 || !this.pending || this.terminated) return;
    const lines = this.stdout.slice(0, end);
    this.stdout = this.stdout.slice(end + 1);
    this.settle({ exitCode: null, signal: null, stdout: lines });
  }

  private onStderr(d: Buffer): void {
    const lines = (this.partial + d.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.stderrLine(line);
  }

  private stderrLine(line: string): void {
    const p = this.pending;
    if (line && p && !p.onLine(line)) p.stderrTail = (p.stderrTail + line + '\n').slice(-STDERR_TAIL);
  }

  private watch(): Promise<void> {
    this.child.stdout.on('data', (d: Buffer) => this.onStdout(d));
    this.child.stderr.on('data', (d: Buffer) => this.onStderr(d));
    this.child.on('exit', () => {
      this.exited = true;
      clearTimeout(this.killTimer);
      killGroup(this.pid, 'SIGKILL');
    });
    return new Promise((resolve) => {
      this.child.on('close', (exitCode, signal) => {
        this.exited = true;
        if (this.partial) this.stderrLine(this.partial);
        this.settle({ exitCode, signal, stdout: this.stdout });
        resolve();
      });
    });
  }
}
