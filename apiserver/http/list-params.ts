/** A list request's query, as the lister takes it. */
import { badRequest, invalid, type StatusCause } from '../errors.js';
import type { ListParams } from '../rest/lister.js';
import { int, str, type Query } from './params.js';

/**
 * A list's paging and resourceVersion parameters, checked as kube-apiserver checks a list's ListOptions:
 * resourceVersionMatch only with a resourceVersion, never with continue, Exact never with "0"; and no
 * resourceVersion beside a continue token (which carries its own).
 */
export function listParams(q: Query): ListParams {
  const resourceVersion = str(q, 'resourceVersion');
  const continueToken = str(q, 'continue');
  const match = str(q, 'resourceVersionMatch') ?? '';
  const causes: StatusCause[] = [];
  const forbidden = (message: string) => causes.push({ reason: 'FieldValueForbidden', field: 'resourceVersionMatch', message: `Forbidden: ${message}` });
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') causes.push({ reason: 'FieldValueNotSupported', field: 'resourceVersionMatch', message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""` });
  else if (match !== '' && continueToken) forbidden('resourceVersionMatch is forbidden when continue is provided');
  else if (match !== '' && !resourceVersion) forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided');
  else if (match === 'Exact' && resourceVersion === '0') forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  if (causes.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', causes);
  if (continueToken && resourceVersion && resourceVersion !== '0') throw badRequest('specifying resource version is not allowed when using continue');
  return { limit: int(q, 'limit') ?? 0, continueToken, resourceVersion, ...(match ? { resourceVersionMatch: match as 'Exact' | 'NotOlderThan' } : {}) };
}
