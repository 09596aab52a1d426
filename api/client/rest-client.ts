/**
 * Requests to any path of the API with a client-node KubeConfig's
 * connection settings and credentials (its pooled keep-alive agent, CA,
 * client certificate, token or exec plugin, proxy), sent through Node's own
 * https as runtime/watch-stream.ts sends watches. client-node's generated
 * clients cost about 0.4 ms of CPU per call in their fetch shim, header
 * objects and serializer, the largest share of the controller's CPU at
 * 5,000 instances (hack/bench/controller-bench.ts); the requests on the
 * wire are the same. Responses come back as plain JSON; failures as
 * ApiStatusError, or a network error naming the URL and carrying its code.
 */
import type https from 'node:https';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { cairnVersion } from '../version.js';
import { jsonBody, jsonHeaders, requestUrl, send, type HttpMethod, type RestRequest } from './http-exchange.js';

/** One API call by method and path, e.g. rest.request('GET', '/apis/cairn.dev/v1alpha1'). */
export class RestClient {
  /** Throws as client-node's makeApiClient does when the kubeconfig names no cluster to talk to. */
  constructor(private readonly kc: KubeConfig) {
    currentCluster(kc);
  }

  /** Builds a RestClient that uses kc's credentials and connection pool. */
  static forConfig(kc: KubeConfig): RestClient {
    return new RestClient(kc);
  }

  /** Sends the request and resolves with the parsed JSON body. */
  async request<T = Record<string, unknown>>(method: HttpMethod, path: string, req: RestRequest = {}): Promise<T> {
    const cluster = currentCluster(this.kc);
    const options: https.RequestOptions = {};
    await this.kc.applyToHTTPSOptions(options);
    const { headers, body } = jsonHeaders(req);
    const all = { 'User-Agent': userAgent(), ...headers, ...(options.headers as Record<string, string>) };
    const res = await send(requestUrl(cluster.server, path, req.query), { ...options, method, headers: all }, body);
    return jsonBody<T>(res);
  }
}

/**
 * As client-go's, product/version: the apiserver names the field manager of a write that gives none after it
 * (the garbage collector's patches), and its audit log shows it.
 */
function userAgent(): string {
  return `cairn-client/${cairnVersion()}`;
}

function currentCluster(kc: KubeConfig): Cluster {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  return cluster;
}
