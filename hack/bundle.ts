/**
 * Bundles the compiled CLI (dist/cli/main.js) and the agent's operation
 * worker into dist/bundle/, which bin/cairn.js runs. Node.js 20 resolves and
 * compiles every ES module file on its own: the apiserver, agent and
 * controller each load over a thousand, and `@kubernetes/client-node` alone
 * costs about 1 CPU-s per process. One bundle split at the CLI's lazy
 * imports (one chunk per command's code) loads in a fraction of that.
 *
 * etcd3 stays outside: it reads its .proto files from its own folder, and
 * protobufjs, which the apiserver shares with it, must stay one copy. Tests
 * import dist/ directly; what they spawn runs the bundle. Stack traces name
 * lines of the chunks; `NODE_OPTIONS=--enable-source-maps` maps them to the
 * TypeScript sources (not on by default: every start would parse the maps).
 * Run by `npm run build` after tsc: `node dist/hack/bundle.js`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { packagePath } from '../api/package-files.js';

const outdir = packagePath('dist', 'bundle');
// Chunks are named by content hash: the last build's would stay beside this one's.
fs.rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [packagePath('dist/cli/main.js'), packagePath('dist/agent/operations/worker.js')],
  outdir,
  entryNames: '[name]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  external: ['etcd3', 'protobufjs'],
  // Bundled CommonJS packages call require(), which an ES module lacks.
  banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
});
// The agent spawns the worker found next to its own code (agent/operations/runner.ts): here, the chunk's folder.
if (!fs.existsSync(path.join(outdir, 'worker.js'))) throw new Error(`${outdir}/worker.js is missing: the agent could not start its operation workers`);
