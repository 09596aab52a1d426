/**
 * Request bodies: read raw (with the size limit enforced by the request
 * listener), then decoded by content type. YAML is accepted where kube
 * accepts it (apply patches, and `application/yaml` writes). Anything
 * malformed, or shaped past the limits of validation/limits.ts, is a 400
 * before any other work: decoding is where a hostile body would cost most.
 */
import YAML, { isAlias, isCollection, isNode, isPair, type Document, type Node } from 'yaml';
import { ApiError, badRequest } from '../errors.js';
import { groupVersion, type ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { MAX_NESTING_DEPTH, MAX_YAML_ALIASES, shapeProblem } from '../validation/limits.js';
import { decodeProtobuf, PROTOBUF_CONTENT_TYPE } from './protobuf.js';

/** The media type of a Content-Type header, without its parameters, lower-cased ('' when there is none). */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The body as a JSON value. */
export function decodeBody(raw: unknown, contentType: string | undefined): unknown {
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
  if (text.trim() === '') throw badRequest('the request body is empty; send a JSON object');
  const type = mediaType(contentType ?? 'application/json');
  const value = type === PROTOBUF_CONTENT_TYPE ? decodeProtobuf(raw as Buffer) : type === 'application/yaml' || type === 'application/apply-patch+yaml' ? parseYaml(text) : parseJson(text);
  const problem = shapeProblem(value);
  if (problem) throw badRequest(`the request body is too complex at ${problem.path}: ${problem.message}; simplify the object`);
  return value;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

function parseYaml(text: string): unknown {
  // JSON is YAML, and what kubectl, client-go and the GitOps tools send as an apply: parsed as such, a
  // large one costs milliseconds where the YAML parser takes a second (1 MB/s).
  if (/^\s*\{/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // YAML that looks like JSON (a flow mapping): the YAML parser says what is wrong, if anything.
    }
  }
  try {
    if (flowDepth(text) > MAX_NESTING_DEPTH) throw new Error(`nested more than ${MAX_NESTING_DEPTH} levels deep`);
    const docs = YAML.parseAllDocuments(text);
    if (!Array.isArray(docs) || docs.length !== 1) throw new Error('expected exactly one YAML document');
    const doc = docs[0]!;
    if (doc.errors.length > 0) throw doc.errors[0]!;
    checkYamlNodes(doc);
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    // The YAML parser recurses: a body nested deeper than the stack ends it, and is simply too deep.
    const why = /Maximum call stack size exceeded/.test(String(err)) ? `nested more than ${MAX_NESTING_DEPTH} levels deep` : (err as Error).message.split('\n')[0];
    throw badRequest(`the request body is not valid YAML: ${why}`);
  }
}

/**
 * The deepest nesting of [ ] and { } outside quoted scalars: the parser recurses on each, so a deep
 * one costs it 100 ms before the stack ends it (brackets in comments or plain scalars only overcount).
 */
function flowDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth = Math.max(0, depth - 1);
    else if (c === 0x22 || c === 0x27) i = quotedEnd(text, i);
  }
  return max;
}

/** The index of the quote that closes the one at `start` ("..." with backslash escapes, '...' with ''). */
function quotedEnd(text: string, start: number): number {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') i++;
    else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") i++;
      else return i;
    }
  }
  return text.length;
}

/**
 * What JSON cannot hold, refused before it is built: a key that is a mapping or a sequence (turning
 * nested ones into strings takes time exponential in their depth), an anchor used inside itself (a
 * cycle no JSON can encode), and more aliases than toJS() would expand. One walk in document order,
 * where each alias finds its anchor in a map: the parser's own alias.resolve() walks the whole
 * document for every alias, so a body of many aliases cost time quadratic in its size.
 */
function checkYamlNodes(doc: Document.Parsed): void {
  const anchors = new Map<string, Node>();
  let aliases = 0;
  YAML.visit(doc, (_, node, path) => {
    if (isPair(node) && (isCollection(node.key) || (isAlias(node.key) && isCollection(anchors.get(node.key.source))))) {
      throw new Error('mapping keys must be strings, not mappings or sequences');
    }
    if (isAlias(node)) {
      if (++aliases > MAX_YAML_ALIASES) throw new Error(`more than ${MAX_YAML_ALIASES} aliases`);
      const target = anchors.get(node.source);
      if (target && path.includes(target)) throw new Error(`anchor "${node.source}" is used inside itself`);
    } else if (isNode(node) && node.anchor) anchors.set(node.anchor, node);
  });
}

/** Checks the body is an object and returns it. */
export function asObject(value: unknown): Record<string, any> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('the request body must be a JSON object (a Kubernetes-style resource)');
  }
  return value as Record<string, any>;
}

/** A value of a client's, for a message: a string as it is, anything else as JSON (never through its own toString). */
export function describe(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(typeof value)).slice(0, 200);
}

/** An ApiError for a body over the size limit. */
export function tooLarge(limitBytes: number): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes} bytes`);
}

/** The metadata fields every reader takes for strings (a name, a version): anything else is a 400, as kube's decoding makes it. */
const STRING_META = ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'] as const;

/**
 * Fills apiVersion/kind from the URL when absent; rejects a mismatch, a wrong namespace, or identity fields
 * that are not strings. Checked first: an object there ({"toString": 0}) made every message or comparison
 * that turned it into text throw, a 500.
 */
export function checkIdentity(body: KubeObject, def: ResourceDefinition, ns: string | undefined): KubeObject {
  const gv = groupVersion(def);
  body.apiVersion ??= gv;
  body.kind ??= def.kind;
  if (body.apiVersion !== gv) throw badRequest(`the API version in the data (${describe(body.apiVersion)}) does not match the expected API version (${gv})`);
  if (body.kind !== def.kind) throw badRequest(`the kind in the data (${describe(body.kind)}) does not match the expected kind (${def.kind})`);
  if (body.metadata === undefined) body.metadata = {};
  if (body.metadata === null || typeof body.metadata !== 'object' || Array.isArray(body.metadata)) throw badRequest('metadata: must be an object');
  for (const f of STRING_META) {
    const v: unknown = body.metadata[f];
    // null is unset, as kube decodes it (and pruning drops it).
    if (v !== undefined && v !== null && typeof v !== 'string') throw badRequest(`metadata.${f}: must be a string, not ${describe(v)}`);
  }
  if (def.namespaced && body.metadata.namespace != null && body.metadata.namespace !== ns) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  return body;
}
