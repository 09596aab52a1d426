/**
 * What `cairn` loads before a command runs. Every run starts at
 * cli/main.ts and, unless it only prints the version, defines every command
 * (cli/program.ts): their static imports must stay clear of the apiserver,
 * the controller, the agent and the heavy packages, which a command loads
 * with import() only when it runs. A client verb such as `cairn get` with
 * a kubeconfig as Cairn writes it loads neither the server side nor
 * @kubernetes/client-node nor yaml. Reads the compiled modules under dist/,
 * where type-only imports are already gone, and follows static imports only.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';

const DIST = path.join(ROOT, 'dist');

// `import x from '...'`, `import { a, b } from '...'`, `import '...'`, `export * from '...'`: statements at the start of a line,
// as tsc prints them; `await import('...')` does not match.
const STATIC_IMPORT = /^(?:import|export)\s*(?:[\w$*{},\s]+?\s*from\s*)?['"]([^'"]+)['"]/gm;

/** The static imports of a compiled module (path relative to dist/). */
function importsOf(file: string): string[] {
  return [...fs.readFileSync(path.join(DIST, file), 'utf8').matchAll(STATIC_IMPORT)].map((m) => m[1]!);
}

/** The package an import names (`@scope/name` or `name`), or undefined for a relative or node: import. */
function packageOf(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('node:')) return undefined;
  return spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
}

/** Every module of ours and every package reached from `entries` through static imports. */
function staticGraph(...entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) visit(path.join(path.dirname(file), spec));
      else if (packageOf(spec)) packages.add(packageOf(spec)!);
    }
  };
  entries.forEach(visit);
  return { files, packages };
}

const SERVER_SIDE = /^(apiserver|controller|agent)\//;
// Pure settings (defaults shown by --help, the worker's environment variable): nothing of the apiserver runs.
const SETTINGS_ONLY = ['apiserver/options.js'];

describe('what cairn loads at start-up', () => {
  const startup = staticGraph('cli/main.js', 'cli/program.js');

  it('cli/main.js alone (cairn --version) loads only the version and the worker check', () => {
    expect([...staticGraph('cli/main.js').files].sort()).to.deep.equal(['api/package-files.js', 'api/version.js', 'apiserver/options.js', 'cli/main.js']);
  });

  it('defining every command reaches no apiserver, controller or agent module', () => {
    expect([...startup.files].filter((f) => SERVER_SIDE.test(f) && !SETTINGS_ONLY.includes(f))).to.deep.equal([]);
  });

  it('the settings modules it may reach import nothing at run time', () => {
    expect(SETTINGS_ONLY.flatMap(importsOf)).to.deep.equal([]);
  });

  it('defining every command loads no package but commander and jsonpath-plus (which checks wait --for=jsonpath)', () => {
    expect([...startup.packages].sort()).to.deep.equal(['commander', 'jsonpath-plus']);
  });

  it('no command loads what it does before it runs (cli/run/ and the API client come with import())', () => {
    expect([...startup.files].filter((f) => f.startsWith('cli/run/') || f === 'cli/client/context.js')).to.deep.equal([]);
  });

  it('cairn get reaches nothing of the server side, and no package but js-yaml (client-node and yaml come with import() when needed)', () => {
    const get = staticGraph('cli/run/get.js', 'cli/client/context.js');
    expect([...get.files].filter((f) => SERVER_SIDE.test(f) || f === 'cli/client/client-node-client.js')).to.deep.equal([]);
    expect([...get.packages].sort()).to.deep.equal(['js-yaml']);
    expect([...staticGraph('cli/client/client-node-client.js').packages]).to.include('@kubernetes/client-node');
  });

  it('finds what it looks for', () => {
    expect(startup.files).to.include('cli/commands/get.js').and.to.include('cli/commands/server.js');
    const server = staticGraph('cli/run/server.js');
    expect([...server.files].some((f) => f.startsWith('apiserver/'))).to.equal(true);
    expect([...server.packages]).to.include('etcd3').and.to.include('express').and.to.include('@peculiar/x509');
    expect(importsOf('cli/commands/get.js')).to.not.include('../run/get.js'); // its dynamic import is not a static one
    expect(fs.readFileSync(path.join(DIST, 'cli/commands/get.js'), 'utf8')).to.include("import('../run/get.js')");
  });
});
