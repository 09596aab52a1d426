/**
 * The HTTP client every request of the dashboard goes through: it adds the
 * bearer token, turns a Kubernetes Status answer into an ApiError carrying
 * the server's message, and reports a refused token (401) once, so the
 * session can end instead of every view failing on its own.
 */

/** A failed API request: the HTTP status and the server's own words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  accept?: string;
}

/** What the views and the live store need from the server. */
export interface Api {
  readonly token: string;
  /** A JSON request; resolves to the decoded answer, rejects with an ApiError. */
  json<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** A request whose body is read as a stream (watches, logs); rejects with an ApiError unless 2xx. */
  stream(path: string, signal: AbortSignal): Promise<Response>;
}

interface StatusBody {
  kind?: string;
  message?: string;
  reason?: string;
}

/** The error a non-2xx answer stands for, with the Status message when the server sent one. */
export async function errorFromResponse(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  const status = parseStatus(text);
  return new ApiError(res.status, status?.message || fallbackMessage(res, text), status?.reason);
}

/** The Kubernetes Status document `text` holds, if it is one. */
export function parseStatus(text: string): StatusBody | undefined {
  try {
    const body = JSON.parse(text) as unknown;
    return body !== null && typeof body === 'object' ? (body as StatusBody) : undefined;
  } catch {
    return undefined;
  }
}

function fallbackMessage(res: Response, text: string): string {
  const plain = text.trim().slice(0, 300);
  return `${res.status} ${res.statusText || 'error'}${plain ? `: ${plain}` : ''}`;
}

/** The message to show for anything thrown by a request or an action. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * A client for `token`. `onUnauthorized` is called when the server refuses
 * the token (401), e.g. because it expired or was revoked.
 */
export function createApi(token: string, onUnauthorized: () => void): Api {
  const headers = (extra: Record<string, string>) => ({ Authorization: `Bearer ${token}`, ...extra });

  async function send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const extra: Record<string, string> = { Accept: options.accept ?? 'application/json' };
    if (options.body !== undefined) extra['Content-Type'] = options.contentType ?? 'application/json';
    const res = await fetch(path, {
      method,
      headers: headers(extra),
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
    if (res.ok) return res;
    if (res.status === 401) onUnauthorized();
    throw await errorFromResponse(res);
  }

  return {
    token,
    async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
      const res = await send(method, path, options);
      return (await res.json()) as T;
    },
    stream(path: string, signal: AbortSignal): Promise<Response> {
      return send('GET', path, { signal, accept: '*/*' });
    },
  };
}
