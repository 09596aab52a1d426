/**
 * Requests to any path of the API through client-node's transport (its
 * auth, TLS and keep-alive agent), for callers that need what the typed
 * clients do not offer: discovery of every group, Table output (a custom
 * Accept header), server-side apply of any kind. Responses come back as
 * plain JSON; failures as ApiStatusError.
 */
import { KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import { toApiError } from './errors.js';

/** Query, headers and body of one request. */
export interface RestRequest {
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Sent as JSON unless already a string. */
  body?: unknown;
}

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One API call by method and path, e.g. rest.request('GET', '/apis/cairn.dev/v1alpha1'). */
export class RestClient extends KubernetesObjectApi {
  /** Builds a RestClient that uses kc's credentials and connection pool. */
  static forConfig(kc: KubeConfig): RestClient {
    return kc.makeApiClient(RestClient);
  }

  /** Sends the request and resolves with the parsed JSON body. */
  async request<T = Record<string, unknown>>(method: HttpMethod, path: string, req: RestRequest = {}): Promise<T> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, method as never);
    ctx.setHeaderParam('Accept', 'application/json');
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) ctx.setQueryParam(k, String(v));
    if (req.body !== undefined) {
      ctx.setHeaderParam('Content-Type', 'application/json');
      ctx.setBody(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
    }
    for (const [k, v] of Object.entries(req.headers ?? {})) ctx.setHeaderParam(k, v);
    try {
      // 'any' makes client-node hand back the JSON untouched (no model mapping).
      return (await this.requestPromise(ctx, 'any')) as unknown as T;
    } catch (err) {
      throw toApiError(err);
    }
  }
}
