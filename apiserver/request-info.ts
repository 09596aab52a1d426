/**
 * Turns a request path into what it addresses (kube's RequestInfoResolver):
 * `/apis/<group>/<version>/[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]`
 * and `/api/v1/...` for the core group.
 */

/** What a resource URL names. */
export interface RequestInfo {
  group: string;
  version: string;
  namespace?: string;
  plural: string;
  name?: string;
  subresource?: string;
}

const NAMESPACE_SUBRESOURCES = ['status', 'finalize'];

/** The parsed path, or null when it is not a resource URL. */
export function parseResourcePath(pathname: string): RequestInfo | null {
  let parts: string[];
  try {
    parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return null; // a malformed %-escape names nothing
  }
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    [group, rest] = ['', parts.slice(2)];
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    [group, rest] = [parts[1]!, parts.slice(3)];
  } else return null;
  const version = parts[0] === 'api' ? parts[1]! : parts[2]!;
  // `/api/v1/namespaces/<ns>` is the Namespace object itself, not a scope, and so are its subresources.
  if (group === '' && rest[0] === 'namespaces' && rest.length === 3 && NAMESPACE_SUBRESOURCES.includes(rest[2]!)) {
    return { group, version, plural: 'namespaces', name: rest[1], subresource: rest[2] };
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const [, namespace, plural, name, subresource, ...extra] = rest;
    if (extra.length > 0) return null;
    return { group, version, namespace, plural: plural!, name, subresource };
  }
  const [plural, name, subresource, ...extra] = rest;
  if (extra.length > 0 || !plural) return null;
  return { group, version, plural, name, subresource };
}
