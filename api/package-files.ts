/**
 * Files shipped with Cairn's package (package.json, crds/, the built
 * dashboard), found from wherever the running code sits: dist/<folder>/ when
 * compiled, dist/bundle/ when bundled (hack/bundle.ts), the sources' own
 * folders when run directly. The package root is the nearest folder up that
 * holds a package.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** `segments` joined onto the package root. */
export function packagePath(...segments: string[]): string {
  root ??= findRoot(path.dirname(fileURLToPath(import.meta.url)));
  return path.join(root, ...segments);
}

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`Cairn's package.json is not in ${from} or any folder above it: reinstall Cairn`);
  }
}
