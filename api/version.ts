/**
 * The version of Cairn, read once from package.json: everything may import
 * this (the CLI prints it before it loads anything else, the apiserver
 * serves it at /version, the agent reports it on its Node).
 */
import fs from 'node:fs';
import { packagePath } from './package-files.js';

let cached: string | undefined;

/** The version Cairn reports (from package.json; 0.0.0 when none is found). */
export function cairnVersion(): string {
  cached ??= readVersion();
  return cached;
}

function readVersion(): string {
  const file = packagePath('package.json');
  return file === undefined ? '0.0.0' : (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}
