/**
 * The version of Cairn, read once from package.json: everything may import
 * this (the CLI prints it before it loads anything else, the apiserver
 * serves it at /version, the agent reports it on its Node).
 */
import fs from 'node:fs';
import { packagePath } from './package-files.js';

let cached: string | undefined;

/** The version Cairn reports (from its package.json). */
export function cairnVersion(): string {
  cached ??= readVersion();
  return cached;
}

function readVersion(): string {
  return (JSON.parse(fs.readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
}
