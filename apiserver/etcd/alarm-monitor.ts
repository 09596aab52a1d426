/**
 * What the apiserver knows of etcd's alarms (NOSPACE, CORRUPT), for
 * /readyz, the cairn_apiserver_etcd_alarm metric and the log. It asks etcd
 * for the raised alarms once at start, every 2 s while one is raised (to
 * see it disarmed soon) and every 10 s otherwise (an Alarm call is a raft
 * round trip, and a refused write tells sooner anyway); a write refused for
 * NOSPACE marks that alarm at once. One poll at a time on an unref'd timer;
 * a failed poll keeps what was known.
 */
import type { Logger } from 'winston';
import { noSpaceMessage } from './no-space.js';

/** The alarms etcd defines besides NONE, as it names them. */
export const ETCD_ALARMS = ['NOSPACE', 'CORRUPT'] as const;

/** What the monitor needs; the timer is injectable for tests. */
export interface AlarmMonitorDeps {
  /** The names of the alarms raised now on any member (NOSPACE, CORRUPT). */
  listAlarms: () => Promise<string[]>;
  /** The command that frees space (recoveryCommand), quoted in messages. */
  recovery: string;
  log: Logger;
  /** Told each alarm's state whenever it is known (the metric). */
  onState?: (alarm: string, raised: boolean) => void;
  /** Poll interval while an alarm is raised; default 2 s. */
  raisedIntervalMs?: number;
  /** Poll interval otherwise; default 10 s. */
  clearIntervalMs?: number;
  /** Runs `fn` after `ms`, returning a cancel; default an unref'd setTimeout. */
  schedule?: (fn: () => void, ms: number) => () => void;
}

/** Tracks etcd's raised alarms. */
export class EtcdAlarmMonitor {
  private raised = new Set<string>();
  private cancel: (() => void) | null = null;
  private stopped = false;
  private refusals = 0;

  constructor(private readonly deps: AlarmMonitorDeps) {
    for (const alarm of ETCD_ALARMS) deps.onState?.(alarm, false);
  }

  /** Polls now, then on the timer until stop(). */
  start(): void {
    void this.refresh().finally(() => this.scheduleNext());
  }

  /** Stops polling. */
  stop(): void {
    this.stopped = true;
    this.cancel?.();
  }

  /** A write was refused for NOSPACE: the alarm is raised, whatever the last poll said. */
  noteNoSpace(): void {
    this.refusals++;
    if (!this.raised.has('NOSPACE')) this.update(new Set([...this.raised, 'NOSPACE']));
  }

  /** Asks etcd which alarms are raised. */
  async refresh(): Promise<void> {
    const refusals = this.refusals;
    try {
      const alarms = await this.deps.listAlarms();
      // A refusal during the poll is newer news than its answer.
      if (this.refusals === refusals) this.update(new Set(alarms.map((a) => a.toUpperCase())));
    } catch (err) {
      this.deps.log.debug('could not list etcd alarms; keeping the last known state', { error: String(err) });
    }
  }

  /** What /readyz reports while an alarm is raised, one line each; empty when none is. */
  warnings(): string[] {
    return [...this.raised].map((alarm) => this.warningOf(alarm));
  }

  private update(now: Set<string>): void {
    for (const alarm of now) {
      if (this.raised.has(alarm)) continue;
      this.deps.log.error(alarm === 'NOSPACE' ? 'etcd NOSPACE alarm raised: etcd refuses writes' : 'etcd alarm raised', { alarm, detail: this.warningOf(alarm) });
    }
    for (const alarm of this.raised) if (!now.has(alarm)) this.deps.log.info('etcd alarm cleared', { alarm });
    const known = new Set([...ETCD_ALARMS, ...this.raised, ...now]);
    this.raised = now;
    for (const alarm of known) this.deps.onState?.(alarm, now.has(alarm));
  }

  private warningOf(alarm: string): string {
    return alarm === 'NOSPACE' ? noSpaceMessage(this.deps.recovery) : `etcd reports the ${alarm} alarm; see etcd's log`;
  }

  private scheduleNext(): void {
    if (this.stopped) return;
    const ms = this.raised.size > 0 ? (this.deps.raisedIntervalMs ?? 2000) : (this.deps.clearIntervalMs ?? 10_000);
    const schedule = this.deps.schedule ?? defaultSchedule;
    this.cancel = schedule(() => void this.refresh().finally(() => this.scheduleNext()), ms);
  }
}

function defaultSchedule(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
