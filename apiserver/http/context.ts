/** What every HTTP handler of the apiserver is given. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'winston';
import type { Registry } from '../registry.js';
import type { Lister } from '../rest/lister.js';
import type { Namespaces } from '../rest/namespaces.js';
import type { ResourceStore } from '../rest/resource-store.js';
import type { EtcdStore } from '../storage/etcd-store.js';
import type { WatchCache } from '../storage/watch-cache.js';

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
}

/** A request as the resource handlers read it: its path, parsed query and raw body. */
export interface ApiRequest extends IncomingMessage {
  path: string;
  query: Record<string, unknown>;
  body?: Buffer;
}

/** The response of a resource request. */
export type ApiResponse = ServerResponse;
