/**
 * What a client verb sends its requests through: one call by method and
 * path that resolves with the JSON body (failures as ApiStatusError), a
 * watch, and the cluster the kubeconfig names. Two implementations:
 * https-client.ts (Node's https, for the kubeconfigs Cairn writes) and
 * client-node-client.ts (@kubernetes/client-node, for everything else).
 */
import type { HttpMethod, RestRequest } from '../../api/client/http-exchange.js';

export type { HttpMethod } from '../../api/client/http-exchange.js';

/** The current cluster of the kubeconfig, after the connection flags. */
export interface ClusterInfo {
  server: string;
  /** The CA bundle, base64-encoded PEM (certificate-authority-data). */
  caData?: string;
  /** The CA bundle's file (certificate-authority). */
  caFile?: string;
  skipTLSVerify?: boolean;
}

/** A running watch; `stop()` ends it, `done` settles when it ends for any reason (rejects on a failure). */
export interface WatchHandle {
  stop(): void;
  done: Promise<void>;
}

/** How to open a connection of one's own to the apiserver (a log stream, a console WebSocket): its URL, TLS settings and auth headers. */
export interface RawConnection {
  server: string;
  tls: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string; rejectUnauthorized?: boolean };
  headers: Record<string, string>;
}

/** Query parameters; undefined ones are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** A client of the API server. */
export interface ApiClient {
  /** The current cluster (its server is what failures name). */
  readonly cluster: ClusterInfo | undefined;
  /** Sends the request and resolves with the parsed JSON body. */
  request<T = Record<string, unknown>>(method: HttpMethod, path: string, req?: RestRequest): Promise<T>;
  /**
   * Watches the collection at `path` (`watch=true` and `query`), calling `onEvent(type, object)` for each event;
   * resolves once the server answered, `headers` go with the request (an Accept asking for Table events).
   */
  watch(path: string, query: Query, onEvent: (type: string, obj: unknown) => void, headers?: Record<string, string>): Promise<WatchHandle>;
  /** What a connection of its own needs (logs and consoles stream outside the request/response calls). */
  rawConnection(): Promise<RawConnection>;
  /** Closes the pooled connections, so the process can end. */
  close(): void;
}
