/**
 * The node heartbeat: renews the Lease <cluster>/node-<name> every
 * interval, as the kubelet does. The controller marks the Node Unreachable
 * when renewals stop for the lease's duration. A renewal failure is only
 * counted and logged; the next tick tries again.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { nodeLeaseName } from '../api/names.js';
import { withTimeout, type Clock, type TimerHandle } from '../runtime/clock.js';
import { LeaseLock } from '../runtime/lease-lock.js';

/** Settings of a Heartbeat. */
export interface HeartbeatOptions {
  cluster: string;
  nodeName: string;
  intervalMs: number;
  leaseDurationSeconds: number;
  clock: Clock;
  log: Logger;
  /** Called after each attempt with whether it renewed. */
  onResult?(ok: boolean): void;
}

/** Renews the node's heartbeat Lease until stopped. */
export class Heartbeat {
  private readonly lock: LeaseLock;
  private timer: TimerHandle | undefined;
  private stopped = false;
  private lastOk = 0;

  constructor(
    kubeConfig: KubeConfig,
    private readonly opts: HeartbeatOptions,
  ) {
    this.lock = new LeaseLock(kubeConfig, { namespace: opts.cluster, name: nodeLeaseName(opts.nodeName), identity: opts.nodeName, leaseDurationSeconds: opts.leaseDurationSeconds, clock: opts.clock });
  }

  /** Clock time of the last successful renewal (0 = never). */
  get lastRenewed(): number {
    return this.lastOk;
  }

  /** Renews now and then every interval. */
  start(): void {
    void this.tick();
  }

  /** Stops renewing (the lease then expires on its own, which is what a stopped agent should look like). */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** One renewal attempt. */
  async renew(): Promise<boolean> {
    try {
      // Bounded: a request on a connection that a partition left dead never answers, and one hung
      // renewal must not stop every later one (each tick tries again, on a fresh connection).
      const ok = await withTimeout<boolean | undefined>(this.opts.clock, this.lock.tryAcquireOrRenew(), this.opts.intervalMs, undefined);
      if (ok === undefined) throw new Error(`no answer from the apiserver within ${this.opts.intervalMs} ms`);
      if (ok) this.lastOk = this.opts.clock.now();
      else this.opts.log.error('heartbeat lease is held by another identity; is a second agent running with this node name?', { holder: this.lock.observedHolder });
      this.opts.onResult?.(ok);
      return ok;
    } catch (err) {
      this.opts.log.warn('heartbeat lease renewal failed', { error: String(err) });
      this.opts.onResult?.(false);
      return false;
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    await this.renew();
    if (!this.stopped) this.timer = this.opts.clock.setTimer(() => void this.tick(), this.opts.intervalMs);
  }
}
