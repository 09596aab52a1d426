/**
 * Discovery documents (API.md "Discovery"): `/version`, `/api`, `/apis`,
 * and one APIResourceList per group/version, built from the registry.
 * Aggregated discovery is not offered: kubectl falls back to these.
 */
import os from 'node:os';
import type { Registry } from '../registry.js';
import { groupVersion, type ResourceDefinition } from '../resources.js';

/** The version kubectl's dispatcher reads to pick its client (minor 32). */
export function versionInfo(cairnVersion: string): Record<string, string> {
  return {
    major: '1',
    minor: '32',
    gitVersion: `v1.32.0-cairn.${cairnVersion}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${os.platform()}/${os.arch() === 'x64' ? 'amd64' : os.arch()}`,
  };
}

/** `GET /api`. */
export function coreVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** `GET /apis`. */
export function groupList(registry: Registry): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: registry.groups().map(apiGroup) };
}

/** `GET /apis/<group>`, or null for an unknown group. */
export function group(registry: Registry, name: string): Record<string, unknown> | null {
  const g = registry.groups().find((x) => x.name === name);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g) } : null;
}

function apiGroup(g: { name: string; versions: string[] }): Record<string, unknown> {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v }));
  return { name: g.name, versions, preferredVersion: versions[0] };
}

/** `GET /apis/<group>/<version>` or `/api/v1`, or null when nothing is served there. */
export function resourceList(registry: Registry, gv: string): Record<string, unknown> | null {
  const defs = registry.inGroupVersion(gv);
  if (defs.length === 0) return null;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources: defs.flatMap(resourceEntries) };
}

// The main entry comes first: client-node picks the first entry whose kind matches.
function resourceEntries(def: ResourceDefinition): Record<string, unknown>[] {
  const main = {
    name: def.plural,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: def.verbs,
    ...(def.shortNames.length ? { shortNames: def.shortNames } : {}),
    ...(def.categories.length ? { categories: def.categories } : {}),
    storageVersionHash: Buffer.from(`${groupVersion(def)}/${def.kind}`).toString('base64').slice(0, 11),
  };
  if (!def.hasStatus) return [main];
  return [main, { name: `${def.plural}/status`, singularName: '', namespaced: def.namespaced, kind: def.kind, verbs: ['get', 'patch', 'update'] }];
}
