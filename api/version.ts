/**
 * The version of Cairn, read once from package.json: everything may import
 * this (the CLI prints it before it loads anything else, the apiserver
 * serves it at /version, the agent reports it on its Node).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The version Cairn reports (from package.json; 0.0.0 when none is found). */
export function cairnVersion(): string {
  cached ??= readVersion();
  return cached;
}

// From dist/api/ the package.json is two levels up, from api/ (sources run directly) one.
function readVersion(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const p of [path.join(here, '..', '..', 'package.json'), path.join(here, '..', 'package.json')]) {
    if (fs.existsSync(p)) return (JSON.parse(fs.readFileSync(p, 'utf8')) as { version: string }).version;
  }
  return '0.0.0';
}
