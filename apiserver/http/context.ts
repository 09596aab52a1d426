/** What every HTTP handler of the apiserver is given. */
import type { WorkloadSeats } from './priority-levels.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'winston';
import type { WriteAdmission } from '../auth/authorizer.js';
import type { UserInfo } from '../auth/user.js';
import type { Registry } from '../registry.js';
import type { Lister } from '../rest/lister.js';
import type { Namespaces } from '../rest/namespaces.js';
import type { ResourceStore } from '../rest/resource-store.js';
import type { EtcdStore } from '../storage/etcd-store.js';
import type { WatchCache } from '../storage/watch-cache.js';
import type { ApiServerMetrics } from '../metrics.js';
import type { WatchBudget } from './watch-budget.js';

/** Shared state of one apiserver process. */
export interface ApiContext {
  registry: Registry;
  etcd: EtcdStore;
  cache: WatchCache;
  store: ResourceStore;
  lister: Lister;
  namespaces: Namespaces;
  log: Logger;
  /** Closers of open watches, called on shutdown. */
  watches: Set<() => void>;
  /** How long a watch may stay silent before a bookmark or newline is sent. */
  watchKeepaliveMs: number;
  /** The memory all watches may hold for slow clients. */
  watchBudget: WatchBudget;
  metrics: ApiServerMetrics;
  /** The workload priority level's seats (priority-levels.ts). */
  seats: WorkloadSeats;
}

/** A request as the resource handlers read it: its path, parsed query, raw body, and who sent it. */
export interface ApiRequest extends IncomingMessage {
  path: string;
  query: Record<string, unknown>;
  body?: Buffer;
  user: UserInfo;
  /** The check each write of this request must pass, when its authorizer set one. */
  admit?: WriteAdmission;
  /** Authorizes the request again as a create of its object (apply and PUT may create): throws to refuse. */
  authorizeCreate?: () => Promise<WriteAdmission | undefined>;
}

/** The response of a resource request. */
export type ApiResponse = ServerResponse;
