/**
 * Records core/v1 Events about objects, as client-go's EventRecorder does:
 * a repeat of the same (object, type, reason, message) within the
 * aggregation window bumps count and lastTimestamp of the existing Event
 * instead of creating a new one. Like client-go's, it drops Events about an
 * object past a burst of 25, then allows one every 5 minutes
 * (event-spam-filter.ts). Recording never throws: an Event that cannot be
 * written is logged and dropped, it must not fail a reconcile.
 */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { realClock, type Clock } from './clock.js';
import { EventSpamFilter } from './event-spam-filter.js';

/** The object an Event is about. */
export interface InvolvedObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** Normal or Warning, as core/v1 Event.type. */
export type EventType = 'Normal' | 'Warning';

const WINDOW_MS = 10 * 60_000;
const MAX_REMEMBERED = 4096;
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Writes Events on behalf of one component. */
export class EventRecorder {
  private readonly api: CoreV1Api;
  private readonly clock: Clock;
  private readonly recent = new Map<string, { namespace: string; name: string; count: number; at: number }>();
  private readonly spam = new EventSpamFilter();

  constructor(
    kubeConfig: KubeConfig,
    private readonly component: string,
    private readonly host: string,
    private readonly log: Logger,
    clock?: Clock,
  ) {
    this.api = kubeConfig.makeApiClient(CoreV1Api);
    this.clock = clock ?? realClock;
  }

  /** Records an Event about obj (in obj's namespace; cluster-scoped objects use `default`). */
  async record(obj: InvolvedObject, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace || 'default';
    const object = [obj.kind, namespace, obj.metadata.name, obj.metadata.uid].join('\u0000');
    const key = [object, type, reason, message].join('\u0000');
    const now = this.clock.now();
    if (!this.spam.allow(object, now)) return;
    const seen = this.recent.get(key);
    try {
      if (seen && now - seen.at < WINDOW_MS) {
        seen.count++;
        seen.at = now;
        await this.api.patchNamespacedEvent({ namespace, name: seen.name, body: { count: seen.count, lastTimestamp: new Date(now) } }, MERGE_PATCH);
        return;
      }
      const name = `${obj.metadata.name}.${now.toString(16)}${randomBytes(2).toString('hex')}`;
      await this.api.createNamespacedEvent({ namespace, body: this.build(obj, namespace, name, type, reason, message, now) });
      this.remember(key, { namespace, name, count: 1, at: now });
    } catch (err) {
      this.recent.delete(key);
      this.log.warn('could not record event', { reason, object: `${namespace}/${obj.metadata.name}`, error: String(err) });
    }
  }

  private build(obj: InvolvedObject, namespace: string, name: string, type: EventType, reason: string, message: string, now: number): CoreV1Event {
    const time = new Date(now);
    return {
      metadata: { name, namespace },
      involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: time,
      lastTimestamp: time,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
    };
  }

  private remember(key: string, entry: { namespace: string; name: string; count: number; at: number }): void {
    this.recent.set(key, entry);
    if (this.recent.size > MAX_REMEMBERED) this.recent.delete(this.recent.keys().next().value!);
  }
}
