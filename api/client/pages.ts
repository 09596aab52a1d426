/**
 * Paging through a list: each page of at most 500 objects, following continue
 * tokens, for any client that sends a request by path (RestClient, the CLI's
 * ApiClient). Page by page, so a caller may drop what it does not keep before
 * the next one comes.
 */

/** What paging needs of a client. */
export interface PagingClient {
  request<T>(method: 'GET', path: string, req?: { query?: Record<string, string | number | boolean | undefined>; headers?: Record<string, string> }): Promise<T>;
}

/** Each page of the list at `path` (`query` and `headers` go with every page). */
export async function* eachPage<P extends { metadata?: { continue?: string } }>(
  client: PagingClient,
  path: string,
  req: { query?: Record<string, string | number | boolean | undefined>; headers?: Record<string, string> } = {},
): AsyncGenerator<P> {
  let token: string | undefined;
  do {
    const page = await client.request<P>('GET', path, { ...req, query: { ...req.query, limit: 500, continue: token } });
    yield page;
    token = page.metadata?.continue || undefined;
  } while (token);
}
