/**
 * An ApiClient over @kubernetes/client-node, for the kubeconfigs the plain
 * https client does not read (exec and auth-provider plugins, client
 * certificates, proxies, several files in KUBECONFIG...): its KubeConfig
 * with the pooled keep-alive agent, RestClient and Watch. Loading
 * client-node takes most of a second, so context.ts imports this module
 * only for such a kubeconfig.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, type ConnectionOptions, type PooledKubeConfig } from '../../api/client/kubeconfig.js';
import type { RestRequest } from '../../api/client/http-exchange.js';
import { RestClient } from '../../api/client/rest-client.js';
import type { ApiClient, ClusterInfo, HttpMethod, Query, RawConnection, WatchHandle } from './api-client.js';

/** An ApiClient over a client-node KubeConfig. */
export class ClientNodeClient implements ApiClient {
  private readonly rest: RestClient;

  constructor(readonly kc: PooledKubeConfig) {
    this.rest = RestClient.forConfig(kc);
  }

  /** Loads the kubeconfig (and applies the connection flags) as every Cairn client does. */
  static load(opts: ConnectionOptions): ClientNodeClient {
    return new ClientNodeClient(loadKubeConfig(opts));
  }

  get cluster(): ClusterInfo | undefined {
    const c = this.kc.getCurrentCluster();
    return c ? { server: c.server, caData: c.caData, caFile: c.caFile, skipTLSVerify: c.skipTLSVerify } : undefined;
  }

  /** The namespace of the current context, if it names one. */
  get namespace(): string | undefined {
    return this.kc.getContextObject(this.kc.getCurrentContext())?.namespace;
  }

  request<T = Record<string, unknown>>(method: HttpMethod, path: string, req?: RestRequest): Promise<T> {
    return this.rest.request<T>(method, path, req);
  }

  async watch(path: string, query: Query, onEvent: (type: string, obj: unknown) => void, headers?: Record<string, string>): Promise<WatchHandle> {
    let settle!: (err?: unknown) => void;
    const done = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
    // client-node's Watch swallows what its callback throws; as the https client does, it ends the watch.
    let thrown = false;
    let abort: AbortController | undefined;
    const handle = (type: string, obj: unknown) => {
      if (thrown) return;
      try {
        onEvent(type, obj);
      } catch (err) {
        thrown = true;
        settle(err);
        abort?.abort();
      }
    };
    abort = await new Watch(headers ? withHeaders(this.kc, headers) : this.kc).watch(path, query, handle, (err) => settle(isAbort(err) ? undefined : err));
    if (thrown) abort.abort();
    return { stop: () => abort.abort(), done };
  }

  async rawConnection(): Promise<RawConnection> {
    const opts: { ca?: Buffer; cert?: Buffer; key?: Buffer; servername?: string; rejectUnauthorized?: boolean; headers?: Record<string, string> } = {};
    await this.kc.applyToHTTPSOptions(opts as never);
    const { ca, cert, key, servername, rejectUnauthorized, headers = {} } = opts;
    return { server: this.cluster?.server ?? '', tls: { ca, cert, key, servername, rejectUnauthorized }, headers };
  }

  close(): void {
    this.kc.destroyAgent();
  }
}

// client-node's Watch takes its request options from the KubeConfig only, so extra headers go in there.
function withHeaders(kc: KubeConfig, headers: Record<string, string>): KubeConfig {
  const applyToFetchOptions: KubeConfig['applyToFetchOptions'] = (opts) => kc.applyToFetchOptions({ ...opts, headers: { ...opts.headers, ...headers } });
  return Object.assign(Object.create(kc) as KubeConfig, { applyToFetchOptions });
}

function isAbort(err: unknown): boolean {
  return !err || (err as Error).name === 'AbortError';
}
