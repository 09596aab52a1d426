/**
 * Requests to any path of the API through client-node's transport (its
 * auth, TLS and keep-alive agent), for callers that need what the typed
 * clients do not offer: discovery of every group, Table output (a custom
 * Accept header), server-side apply of any kind. Responses come back as
 * plain JSON; failures as ApiStatusError.
 */
import { KubernetesObjectApi, type KubeConfig, type KubernetesObject, type ResponseContext } from '@kubernetes/client-node';
import { toApiError } from './errors.js';

/** Query, headers and body of one request. */
export interface RestRequest {
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Sent as JSON unless already a string. */
  body?: unknown;
}

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

// The response type that asks processResponse for the body untouched.
const RAW_JSON = 'RawJson';

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
      return (await this.requestPromise(ctx, RAW_JSON)) as unknown as T;
    } catch (err) {
      throw toApiError(err);
    }
  }

  /**
   * A successful response as the server sent it: client-node's own mapping turns the metadata
   * of anything shaped like an object into its model (timestamps become Dates, re-printed as
   * `...51.000Z`); failures still go through client-node, which throws ApiException.
   */
  protected override async processResponse<T extends KubernetesObject>(response: ResponseContext, type?: string): Promise<T> {
    if (type !== RAW_JSON || response.httpStatusCode < 200 || response.httpStatusCode > 299) return super.processResponse<T>(response, type);
    const text = await response.body.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
