/**
 * Deletes Token objects an hour after they expired (kube's token cleaner):
 * rotated node credentials and spent join tokens would otherwise pile up.
 * The hour keeps a just-expired token listed, so its holder is told
 * "expired" rather than "unknown". Every apiserver replica runs one;
 * deleting twice is harmless (a 404 is ignored).
 */
import type { Logger } from 'winston';
import { ApiError } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import type { ResourceStore } from '../rest/resource-store.js';
import type { ResourceCache } from '../storage/resource-cache.js';
import { expiryMs, type TokenSpec } from './stored-tokens.js';

const KEEP_AFTER_EXPIRY_MS = 3600_000;
const INTERVAL_MS = 10 * 60_000;

/** The expired tokens due for deletion at `now`. */
export function tokensToDelete(tokens: { metadata: { name?: string }; spec?: unknown }[], now: number): string[] {
  return tokens.filter((t) => {
    const expires = expiryMs((t.spec as TokenSpec | undefined)?.expires);
    return expires !== undefined && expires + KEEP_AFTER_EXPIRY_MS <= now;
  }).map((t) => t.metadata.name!);
}

/** Starts the periodic sweep; returns its stop function. */
export function startTokenCleaner(def: ResourceDefinition, tokens: ResourceCache, store: ResourceStore, log: Logger): () => void {
  const sweep = async () => {
    for (const name of tokensToDelete(tokens.list(() => true), Date.now())) {
      try {
        await store.delete(def, undefined, name, {}, false);
        log.info('deleted an expired token', { token: name });
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) log.warn('deleting an expired token failed; will retry', { token: name, error: String(err) });
      }
    }
  };
  const timer = setInterval(() => void sweep(), INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
