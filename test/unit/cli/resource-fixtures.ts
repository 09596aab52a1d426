/** ResourceInfo values as discovery would report them, for the CLI's unit tests. */
import type { ResourceInfo } from '../../../cli/client/catalog.js';

/** A served resource of `group` ('' = core, cairn.dev = v1alpha1, others v1). */
export function resourceInfo(group: string, plural: string, kind: string, extra: Partial<ResourceInfo> = {}): ResourceInfo {
  return {
    group,
    version: group === 'cairn.dev' ? 'v1alpha1' : 'v1',
    plural,
    singular: kind.toLowerCase(),
    kind,
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ['get', 'list', 'watch'],
    ...extra,
  };
}
