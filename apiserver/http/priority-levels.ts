/**
 * Overload protection, kube's API Priority and Fairness in spirit: every
 * request that is not long-running takes a seat of its priority level
 * before it is served, and gives it back when its response ends.
 *
 * - `leases`: Leases (node heartbeats, instance claims, leader election)
 *   and whatever a node identity asks. Their seats are not limited: a
 *   renewal that waits behind a flood is a node called Unreachable and its
 *   instances failed over for nothing.
 * - `workload`: everything else. At most `seats` are served at once; the
 *   rest wait in arrival order, at most `queue` of them, and beyond that
 *   get 429 with Retry-After, as kube's APF answers. Fewer requests in
 *   flight also means fewer callbacks on the event loop between a renewal's
 *   arrival and its answer.
 * - `progress`: workload that carries out what was already accepted:
 *   status writes, WorkItems and Events (the controller's and agents'
 *   side of the work). It shares the workload seats but waits ahead of
 *   the rest, as kube's workload-high level waits ahead of workload-low:
 *   a burst of new Instances then slows its sender down, instead of
 *   starving the status of the Instances created before it.
 *
 * Watches, followed logs and consoles take no seat: they last as long as
 * their client wants. `seats` 0 turns the limit off.
 */
import type { UserInfo } from '../auth/user.js';
import { NODES_GROUP } from '../auth/stored-tokens.js';
import { ApiError } from '../errors.js';
import type { RequestInfo } from '../request-info.js';
import { logFlag } from './params.js';

/** The priority level a request is served at (`exempt`: no seat). */
export type PriorityLevel = 'exempt' | 'leases' | 'progress' | 'workload';

/** The levels that take a workload seat. */
export type SeatedLevel = 'progress' | 'workload';

// Kinds whose writes carry out accepted work, whoever sends them.
const PROGRESS_KINDS = new Set(['cairn.dev/workitems', '/events', 'events.k8s.io/events']);

/**
 * Pure: the level of a request from who sent it and what it asks (`verb`: the authorization verb). Only
 * watches, followed logs and consoles are long-running, read by the parsers their handlers use: a
 * `?follow` (bare) once took a seat for as long as it followed, and `follow=true` on a POST none at all.
 */
export function priorityLevel(user: Pick<UserInfo, 'groups'>, info: Pick<RequestInfo, 'group' | 'plural' | 'subresource'>, verb: string, query: Record<string, unknown>): PriorityLevel {
  if (isLongRunning(info, verb, query)) return 'exempt';
  if (info.group === 'coordination.k8s.io' && info.plural === 'leases') return 'leases';
  if (user.groups.includes(NODES_GROUP)) return 'leases';
  return info.subresource === 'status' || PROGRESS_KINDS.has(`${info.group}/${info.plural}`) ? 'progress' : 'workload';
}

function isLongRunning(info: Pick<RequestInfo, 'subresource'>, verb: string, query: Record<string, unknown>): boolean {
  if (verb === 'watch' || info.subresource === 'console') return true;
  if (info.subresource !== 'log' || verb !== 'get') return false;
  try {
    return logFlag(query, 'follow') === true;
  } catch {
    return false; // refused by the log handler at once
  }
}

/** The workload level's seats and queue. */
export class WorkloadSeats {
  private busy = 0;
  private readonly waiting: Record<SeatedLevel, Array<() => void>> = { progress: [], workload: [] };

  constructor(
    readonly seats: number,
    readonly queue: number,
  ) {}

  /** Requests served now and waiting. */
  get state(): { busy: number; waiting: number } {
    return { busy: this.busy, waiting: this.waiting.progress.length + this.waiting.workload.length };
  }

  /** Resolves with the release of a seat once one is free (progress before workload); 429 when the queue is full. */
  async take(level: SeatedLevel = 'workload'): Promise<() => void> {
    if (this.seats <= 0) return () => undefined;
    if (this.busy >= this.seats) {
      if (this.state.waiting >= this.queue) throw tooManyRequests(this.seats, this.queue);
      await new Promise<void>((resolve) => this.waiting[level].push(resolve));
    } else {
      this.busy++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.progress.shift() ?? this.waiting.workload.shift();
      if (next) next(); // the seat passes on: busy stays the same
      else this.busy--;
    };
  }
}

function tooManyRequests(seats: number, queue: number): ApiError {
  const message = `the API server is overloaded: ${seats} requests are being served and ${queue} wait; retry after a second (node heartbeats and leases are served apart from this limit; raise --max-requests-inflight to serve more at once)`;
  return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds: 1 });
}
