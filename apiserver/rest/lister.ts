/**
 * GET and LIST: served from the watch cache at a revision no older than etcd's
 * current one (a consistent read), or paged from etcd when the client asks
 * for `limit`/`continue` — every page read at the first page's revision,
 * the continue token carrying that revision and the last key returned.
 */
import { badRequest, expired, notFound, tooLargeResourceVersion, type ApiError } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { PAGE_BYTES, type EtcdStore } from '../storage/etcd-store.js';
import { objectKey, scopePrefix } from '../storage/keys.js';
import { prefixEnd, type WatchCache } from '../storage/watch-cache.js';
import type { Selection } from './selection.js';

/** A list result before it is wrapped in a `<Kind>List`. */
export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
}

/** The list parameters from the query string. */
export interface ListParams {
  limit: number;
  continueToken?: string | undefined;
  resourceVersion?: string | undefined;
  /** Exact: the state at resourceVersion itself (read from etcd at that revision; 410 once compacted). */
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

// How long a consistent list waits for the cache before reading etcd instead.
const FRESHNESS_WAIT_MS = 1000;

/** Lists objects of a kind in a namespace (or everywhere). */
export class Lister {
  constructor(private readonly etcd: EtcdStore, private readonly cache: WatchCache) {}

  /**
   * Reads one object from the cache once it has caught up with etcd (a
   * consistent read without a round trip of its own), or from etcd if the
   * cache lags.
   */
  async get(def: ResourceDefinition, ns: string | undefined, name: string): Promise<KubeObject> {
    const found = (await this.cache.waitFresh(FRESHNESS_WAIT_MS))
      ? this.cache.forResource(def).objects.get(objectKey(def, ns, name))
      : (await this.etcd.get(objectKey(def, ns, name)))?.obj;
    if (!found) throw notFound(def.plural, def.group, name);
    return found;
  }

  /** Runs a list request. */
  async list(def: ResourceDefinition, ns: string | undefined, sel: Selection, p: ListParams): Promise<ListResult> {
    const rv = parseRv(p.resourceVersion);
    // Exact, asked for or implied by a limit with a version (kube's legacy paged read at that version).
    if (rv > 0 && (p.resourceVersionMatch === 'Exact' || (p.limit > 0 && !p.resourceVersionMatch))) return this.page(def, ns, sel, p, rv);
    if (p.limit > 0 || p.continueToken) return this.page(def, ns, sel, p);
    const fresh = rv === 0 && p.resourceVersion === '0' ? true : rv > 0 ? await this.cache.waitForRevision(rv, FRESHNESS_WAIT_MS) : await this.cache.waitFresh(FRESHNESS_WAIT_MS);
    if (!fresh) {
      // The cache lags: etcd is read instead. A version etcd has not reached either is no state to list.
      const read = await this.page(def, ns, sel, { limit: 0 });
      if (rv > Number(read.resourceVersion)) throw tooLargeResourceVersion(rv, read.resourceVersion);
      return read;
    }
    const items = this.cache.forResource(def).list(sel.matches, sel.exact);
    return { items, resourceVersion: String(this.cache.revision) };
  }

  // A client's page ends at `limit` items or once it holds PAGE_BYTES, whichever
  // comes first (kube allows fewer items than asked with a continue token), so
  // `limit` bounds the response's size and not only its count.
  private async page(def: ResourceDefinition, ns: string | undefined, sel: Selection, p: ListParams, atRevision = 0): Promise<ListResult> {
    const prefix = scopePrefix(def, ns);
    const token = p.continueToken ? decodeContinue(p.continueToken) : null;
    let rev = token?.rv ?? atRevision;
    const items: KubeObject[] = [];
    let bytes = 0;
    try {
      for await (const page of this.etcd.scan(token ? prefix + token.start : prefix, prefixEnd(prefix), rev, p.limit)) {
        rev = page.revision;
        for (const [i, kv] of page.kvs.entries()) {
          const obj = this.etcd.toStored(kv).obj;
          if (!sel.matches(obj)) continue;
          items.push(obj);
          bytes += kv.value.length;
          const full = p.limit > 0 && (items.length >= p.limit || bytes >= PAGE_BYTES);
          if (full && (page.more || i < page.kvs.length - 1)) {
            return { items, resourceVersion: String(rev), continue: encodeContinue(rev, kv.key.toString().slice(prefix.length) + '\0') };
          }
        }
      }
    } catch (err) {
      if (token && (err as ApiError)?.code === 410) throw expired(CONTINUE_EXPIRED);
      throw err;
    }
    return { items, resourceVersion: String(rev) };
  }
}

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function parseRv(rv: string | undefined): number {
  if (rv === undefined || rv === '') return 0;
  if (!/^\d+$/.test(rv)) throw badRequest(`resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative integer`);
  return Number(rv);
}

/** kube's continue token: base64 of {"v","rv","start"}. */
export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64');
}

/** Parses a continue token; a malformed one is a 400. */
export function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64').toString()) as { v?: string; rv?: unknown; start?: unknown };
    if (t.v === 'meta.k8s.io/v1' && Number.isInteger(t.rv) && (t.rv as number) > 0 && typeof t.start === 'string' && !t.start.includes('..')) {
      return { rv: t.rv as number, start: t.start };
    }
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid: the continue token is malformed; start a new list without it');
}
