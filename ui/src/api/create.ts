/**
 * Create from YAML: every document of the text is POSTed to its
 * collection, in order; a failed document is reported and the rest still
 * go in (as `cairn apply` does). Where a kind lives is read from the
 * server's discovery document for its apiVersion, so any served kind works.
 * The YAML parser is loaded only when this runs, keeping it out of the
 * dashboard's first load.
 */
import { type Api, errorText } from './http';

/** What happened to one document. */
export interface CreateResult {
  /** `instance demo/web`, or `document 2` when it has no kind or name. */
  subject: string;
  ok: boolean;
  message: string;
}

interface Manifest {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown; generateName?: unknown };
}

interface DiscoveredResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Parses `text` and creates each object; `namespace` is the default for namespaced kinds without one. */
export async function createFromYaml(api: Api, text: string, namespace: string | undefined): Promise<CreateResult[]> {
  const { parseAllDocuments } = await import('yaml');
  const documents = parseAllDocuments(text);
  const discovery = new Map<string, Promise<DiscoveredResource[]>>();
  const results: CreateResult[] = [];
  for (const [index, doc] of documents.entries()) {
    const subject = `document ${index + 1}`;
    if (doc.errors.length > 0) {
      results.push({ subject, ok: false, message: doc.errors[0]?.message ?? 'invalid YAML' });
      continue;
    }
    const manifest = doc.toJS() as Manifest | null;
    if (manifest === null || manifest === undefined) continue; // an empty document, e.g. after a trailing ---
    results.push(await createOne(api, manifest, namespace, subject, discovery));
  }
  if (results.length === 0) results.push({ subject: 'input', ok: false, message: 'the text holds no objects' });
  return results;
}

async function createOne(api: Api, m: Manifest, defaultNamespace: string | undefined, fallbackSubject: string, discovery: Map<string, Promise<DiscoveredResource[]>>): Promise<CreateResult> {
  const subject = describeManifest(m) ?? fallbackSubject;
  try {
    if (typeof m.apiVersion !== 'string' || typeof m.kind !== 'string') throw new Error('apiVersion and kind are required');
    const resource = await findResource(api, m.apiVersion, m.kind, discovery);
    const namespace = typeof m.metadata?.namespace === 'string' ? m.metadata.namespace : defaultNamespace;
    if (resource.namespaced && !namespace) throw new Error(`a ${m.kind} lives in a cluster: set metadata.namespace, or pick a cluster in the sidebar`);
    const path = `${groupVersionPath(m.apiVersion)}${resource.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? '')}` : ''}/${resource.name}`;
    const created = await api.json<Manifest>('POST', `${path}?fieldManager=cairn-ui`, { body: m });
    return { subject: describeManifest(created) ?? subject, ok: true, message: 'created' };
  } catch (err) {
    return { subject, ok: false, message: errorText(err) };
  }
}

function describeManifest(m: Manifest): string | undefined {
  const name = m.metadata?.name ?? m.metadata?.generateName;
  if (typeof m.kind !== 'string' || typeof name !== 'string') return undefined;
  const ns = typeof m.metadata?.namespace === 'string' ? `${m.metadata.namespace}/` : '';
  return `${m.kind.toLowerCase()} ${ns}${name}`;
}

/** The discovery path of an apiVersion: /api/v1 for the core group, /apis/<group>/<version> otherwise. */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

async function findResource(api: Api, apiVersion: string, kind: string, cache: Map<string, Promise<DiscoveredResource[]>>): Promise<DiscoveredResource> {
  let resources = cache.get(apiVersion);
  if (!resources) {
    resources = api.json<{ resources: DiscoveredResource[] }>('GET', groupVersionPath(apiVersion)).then((list) => list.resources);
    cache.set(apiVersion, resources);
  }
  const found = (await resources).find((r) => r.kind === kind && !r.name.includes('/'));
  if (!found) throw new Error(`the server serves no kind ${kind} in ${apiVersion}`);
  return found;
}
