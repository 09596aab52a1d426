/**
 * Keeps one child process running, as systemd would: restarts it when it
 * exits (with backoff 1 s doubling to 30 s, reset after a minute of
 * uptime), and on stop() sends SIGTERM, then SIGKILL after a grace period.
 * `cairn server` supervises its controller this way, so a controller that
 * lost leadership and exited comes back as a follower.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** What to run and how to report it. */
export interface ChildSupervisorOptions {
  name: string;
  command: string;
  args: string[];
  log: { warn(message: string, meta?: Record<string, unknown>): void };
  graceMs?: number;
}

/** A supervised child process. */
export class ChildSupervisor {
  private child: ChildProcess | undefined;
  private stopping = false;
  private backoffMs = 1000;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ChildSupervisorOptions) {}

  /** Starts the child (and keeps restarting it). */
  start(): void {
    if (this.stopping) return;
    const startedAt = Date.now();
    let child: ChildProcess;
    try {
      // The IPC channel is how the child notices that this process died (even by SIGKILL): it disconnects.
      child = spawn(this.opts.command, this.opts.args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    } catch (err) {
      return this.restartLater(startedAt, { error: (err as Error).message });
    }
    this.child = child;
    // A spawn that fails under pressure (EAGAIN, EMFILE) emits 'error' and no 'exit'; unheard, it would end this process.
    child.once('error', (err) => child.pid === undefined && this.restartLater(startedAt, { error: err.message }));
    child.once('exit', (code, signal) => this.restartLater(startedAt, { code, signal }));
  }

  private restartLater(startedAt: number, why: Record<string, unknown>): void {
    this.child = undefined;
    if (this.stopping) return;
    if (Date.now() - startedAt > 60_000) this.backoffMs = 1000;
    this.opts.log.warn(`${this.opts.name} exited; restarting`, { ...why, restartInMs: this.backoffMs });
    this.restartTimer = setTimeout(() => this.start(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
  }

  /** Stops the child: SIGTERM, then SIGKILL after the grace period. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), this.opts.graceMs ?? 10_000);
    await exited;
    clearTimeout(timer);
  }
}
