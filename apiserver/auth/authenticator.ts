/**
 * Authentication: who sent a request, from its bearer token. Several
 * authenticators are asked in turn (the admin token from the data dir, the
 * tokens stored in etcd); the first that recognises the token answers.
 */
import type { UserInfo } from './user.js';
import { AUTHENTICATED_GROUP } from './authorizer.js';

/**
 * What an authenticator makes of a token: the user, a refusal of a token it
 * recognises but that may no longer be used (expired, revoked: the message
 * says which and what to do), or null when the token is not one of its own.
 */
export type AuthResult = { user: UserInfo } | { refused: string } | null;

/** One way of recognising a bearer token. */
export interface Authenticator {
  authenticate(authorizationHeader: string | undefined): AuthResult | Promise<AuthResult>;
}

/** Asks each authenticator in order; the first non-null answer stands. */
export class UnionAuthenticator implements Authenticator {
  constructor(private readonly chain: Authenticator[]) {}

  async authenticate(authorizationHeader: string | undefined): Promise<AuthResult> {
    for (const a of this.chain) {
      const r = await a.authenticate(authorizationHeader);
      if (r) return 'user' in r ? { user: withAuthenticatedGroup(r.user) } : r;
    }
    return null;
  }
}

function withAuthenticatedGroup(u: UserInfo): UserInfo {
  return u.groups.includes(AUTHENTICATED_GROUP) ? u : { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };
}
