/**
 * The embedded etcd of `cairn server`: one member under the server's data
 * dir, restarted on the same ports with backoff if it dies, stopped last on
 * shutdown. Its client stays valid across restarts because the address does.
 */
import type { Logger } from 'winston';
import { startEtcd, type EtcdProcess, type EtcdProcessOptions } from './process.js';

/** A supervised etcd child process. */
export class EtcdSupervisor {
  private proc: EtcdProcess | null = null;
  private starting: Promise<EtcdProcess> | null = null;
  private stopping = false;
  private restarts = 0;

  constructor(private readonly opts: EtcdProcessOptions, private readonly log: Logger) {}

  /** Starts etcd; resolves with its client endpoint once healthy. */
  async start(): Promise<string> {
    this.proc = await startEtcd(this.opts);
    this.watch(this.proc);
    this.log.info('embedded etcd started', { endpoint: this.proc.endpoint, dataDir: this.opts.dataDir });
    return this.proc.endpoint;
  }

  /** Stops etcd for good. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.starting?.catch(() => undefined); // a restart under way finishes first, then is stopped
    await this.proc?.stop(10_000);
  }

  private watch(proc: EtcdProcess): void {
    proc.child.once('exit', (code, signal) => {
      if (this.stopping) return;
      this.log.error('embedded etcd exited; restarting', { code, signal });
      this.scheduleRestart(proc);
    });
  }

  private scheduleRestart(prev: EtcdProcess): void {
    const delay = Math.min(30_000, 1000 * 2 ** this.restarts++);
    setTimeout(() => void this.restart(prev), delay).unref();
  }

  private async restart(prev: EtcdProcess): Promise<void> {
    if (this.stopping) return;
    try {
      this.starting = startEtcd({ ...this.opts, clientPort: prev.clientPort, peerPort: prev.peerPort });
      this.proc = await this.starting;
      // stop() ran while this start was under way: whichever of us gets here first, this process must not outlive it.
      if (this.stopping) return void (await this.proc.stop(10_000));
      this.starting = null;
      this.restarts = 0;
      this.watch(this.proc);
      this.log.info('embedded etcd restarted', { endpoint: this.proc.endpoint });
    } catch (err) {
      this.log.error('embedded etcd restart failed', { error: String(err) });
      this.starting = null;
      this.scheduleRestart(prev);
    }
  }
}
