/**
 * What a Token's schema cannot say: on an update, who the token is and how
 * it is checked stay fixed, its life and uses only shrink, and a revocation
 * is for good. Otherwise anyone
 * allowed to patch tokens (to revoke them, as `cairn token revoke` does)
 * could add system:masters to their own token's groups, or put a digest
 * they know on another node's token and act as that node. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StatusCause } from '../errors.js';
import { expiryMs } from '../auth/stored-tokens.js';
import type { KubeObject } from '../storage/codec.js';

/** The spec fields that say who a token authenticates, and how it is checked. */
const IDENTITY_FIELDS = ['type', 'secretHash', 'user', 'groups', 'cluster', 'nodeName'] as const;

type TokenSpecFields = Partial<Record<(typeof IDENTITY_FIELDS)[number] | 'revoked' | 'expires' | 'maxUses', unknown>>;

/** The field causes of a Token write (`old`: the stored one; a create has none). */
export function tokenCauses(obj: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const spec = (obj.spec ?? {}) as TokenSpecFields;
  // The schema's date-time takes a leap second (23:59:60), which Date.parse, and so every check of the expiry, does not.
  if (spec.expires !== undefined && Number.isNaN(Date.parse(String(spec.expires)))) {
    return [{ reason: 'FieldValueInvalid', field: 'spec.expires', message: `Invalid value: ${JSON.stringify(spec.expires)}: not a time this server reads; write it as RFC 3339 without a leap second, like 2030-01-02T03:04:05Z` }];
  }
  if (!old) return [];
  const was = (old.spec ?? {}) as TokenSpecFields;
  const causes: StatusCause[] = IDENTITY_FIELDS.filter((f) => !isDeepStrictEqual(spec[f], was[f])).map((f) => ({
    reason: 'FieldValueInvalid',
    field: `spec.${f}`,
    message: `Invalid value: ${JSON.stringify(spec[f] ?? null)}: field is immutable; issue a new token instead (cairn token create, cairn user create)`,
  }));
  if (was.revoked === true && spec.revoked !== true) {
    causes.push({ reason: 'FieldValueForbidden', field: 'spec.revoked', message: 'Forbidden: a revoked token stays revoked; issue a new token instead' });
  }
  // A token's life and uses only shrink: lengthened, an expired or spent token would work again.
  // An expiry already stored that does not parse counts as past (stored-tokens.ts): any other lengthens it.
  if (was.expires !== undefined && (spec.expires === undefined || Date.parse(String(spec.expires)) > (expiryMs(String(was.expires)) ?? Infinity))) {
    causes.push({ reason: 'FieldValueForbidden', field: 'spec.expires', message: 'Forbidden: a token\'s expiry may only come sooner; issue a new token instead' });
  }
  if (typeof was.maxUses === 'number' && typeof spec.maxUses === 'number' && spec.maxUses > was.maxUses) {
    causes.push({ reason: 'FieldValueForbidden', field: 'spec.maxUses', message: 'Forbidden: a join token\'s uses may only go down; issue a new token instead' });
  }
  return causes;
}
