/**
 * Request bodies: read raw (with the 1.5 MiB limit enforced by the app),
 * then decoded by content type. YAML is accepted where kube accepts it
 * (apply patches, and `application/yaml` writes). Anything malformed is a 400.
 */
import YAML from 'yaml';
import { ApiError, badRequest } from '../errors.js';

/** The body as a JSON value. */
export function decodeBody(raw: unknown, contentType: string | undefined): unknown {
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
  if (text.trim() === '') throw badRequest('the request body is empty; send a JSON object');
  const type = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/yaml' || type === 'application/apply-patch+yaml') return parseYaml(text);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

function parseYaml(text: string): unknown {
  try {
    const docs = YAML.parseAllDocuments(text);
    if (!Array.isArray(docs) || docs.length !== 1) throw new Error('expected exactly one YAML document');
    const doc = docs[0]!;
    if (doc.errors.length > 0) throw doc.errors[0]!;
    return doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    throw badRequest(`the request body is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** Checks the body is an object and returns it. */
export function asObject(value: unknown): Record<string, any> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('the request body must be a JSON object (a Kubernetes-style resource)');
  }
  return value as Record<string, any>;
}

/** An ApiError for a body over the size limit. */
export function tooLarge(limitBytes: number): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes} bytes`);
}
