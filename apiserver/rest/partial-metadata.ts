/**
 * `Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`:
 * objects as their metadata only, what client-go's metadata client and
 * controller-runtime's metadata-only informers ask for (kube-apiserver's
 * "metadata transform"). Their list and get fall back to full objects when
 * the server ignores it; their watch does not: every event fails to decode,
 * and the informer relists for good.
 */
import type { KubeObject } from '../storage/codec.js';

const PARTIAL = /(?:^|[;,\s])as=PartialObjectMetadata(?:List)?(?=[;,\s]|$)/;

/** The meta.k8s.io version asked for (v1 or v1beta1), when the Accept header asks for metadata only. */
export function wantsPartialMetadata(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  if (!accept) return undefined;
  for (const option of accept.split(',')) {
    if (!PARTIAL.test(option) || !/(^|;)\s*g=meta\.k8s\.io\s*(;|$)/.test(option)) continue;
    return /(^|;)\s*v=v1beta1\s*(;|$)/.test(option) ? 'v1beta1' : 'v1';
  }
  return undefined;
}

/** One object as a PartialObjectMetadata. */
export function partialObject(obj: Pick<KubeObject, 'metadata'>, version: string): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

/** A list as a PartialObjectMetadataList. */
export function partialList(items: KubeObject[], listMeta: Record<string, unknown>, version: string): Record<string, unknown> {
  return { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${version}`, metadata: listMeta, items: items.map((o) => partialObject(o, version)) };
}
