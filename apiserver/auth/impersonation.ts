/**
 * Impersonation, as kube-apiserver does it (`kubectl --as USER --as-group
 * GROUP`): the Impersonate-User and Impersonate-Group headers make the
 * request act as that user, once the authenticated user is allowed the
 * verb `impersonate` on `users` (and on each `groups`) in the core group.
 * Everything after (authorization, what the request may see) is the
 * impersonated user's; the audit log also names who impersonated. A request the authenticated user may not make is
 * refused with 403, never served as that user.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { badRequest } from '../errors.js';
import type { RequestAttributes } from './attributes.js';
import { AUTHENTICATED_GROUP, forbidden, type Authorizer } from './authorizer.js';
import type { UserInfo } from './user.js';

/** The user a request acts as: `user`, or the one its Impersonate-* headers name once `user` may impersonate them. */
export async function impersonatedUser(authorizer: Authorizer, user: UserInfo, headers: IncomingHttpHeaders): Promise<UserInfo> {
  const name = one(headers['impersonate-user']);
  const groups = many(headers['impersonate-group']);
  if (name === undefined) {
    // Present at all, even empty, it asks for impersonation: never served as the caller itself (kube refuses it too).
    if (headers['impersonate-group'] !== undefined) throw badRequest('Impersonate-Group needs Impersonate-User: name the user to act as (kubectl --as USER --as-group GROUP)');
    return user;
  }
  if (name === '') throw badRequest('Impersonate-User: name the user to act as');
  const asks: RequestAttributes[] = [name, ...groups].map((target, i) => ({ user, verb: 'impersonate', resource: { apiGroup: '', resource: i === 0 ? 'users' : 'groups', name: target } }));
  for (const a of asks) {
    const d = await authorizer.authorize(a);
    if (d.decision !== 'allow') throw forbidden(a, d.reason ?? '');
  }
  return { name, groups: [...new Set([...groups, AUTHENTICATED_GROUP])], impersonatedBy: user.name };
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function many(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',').map((s) => s.trim())).filter(Boolean);
}
