/**
 * Bundles the compiled CLI (dist/cli/main.js) and the agent's operation
 * worker into dist/bundle/, which bin/cairn.js runs. Node.js 20 resolves and
 * compiles every ES module file on its own: the apiserver, agent and
 * controller each load over a thousand, and `@kubernetes/client-node` alone
 * costs about 1 CPU-s per process. One bundle split at the CLI's lazy
 * imports (one chunk per command's code) loads in a fraction of that.
 *
 * etcd3 stays outside: it reads its .proto files from its own folder, and
 * the gRPC and protobuf packages it shares with the apiserver must stay one
 * copy. Tests import dist/ directly; what they spawn runs the bundle.
 * Run by `npm run build` after tsc: `node dist/hack/bundle.js`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Two levels under the package root, like the compiled modules it replaces (api/package-files.ts).
const outdir = path.join(root, 'dist', 'bundle');
// Chunks are named by content hash: the last build's would stay beside this one's.
fs.rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [path.join(root, 'dist/cli/main.js'), path.join(root, 'dist/agent/operations/worker.js')],
  outdir,
  entryNames: '[name]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  external: ['etcd3', '@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs'],
  // Bundled CommonJS packages call require(), which an ES module lacks.
  banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
});
