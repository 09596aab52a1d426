/**
 * The layers of the tree point one way (CONVENTIONS.md): only apiserver/
 * talks to etcd; controller/, agent/ and cli/ reach state through the
 * Kubernetes API; api/ imports nothing of ours; runtime/ (what the
 * controller and the agent share) imports neither of them, and the agent
 * never imports the controller. Reads the sources as text.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths.js';

function sources(dir: string): string[] {
  const full = path.join(ROOT, dir);
  if (!fs.existsSync(full)) return [];
  return fs.readdirSync(full, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f));
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

/** The import graph among `files` (relative imports, type-only ones included: they still tie modules together). */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const target = (file: string, spec: string) => path.join(path.dirname(file), spec).replace(/\.js$/, '.ts');
  return new Map(files.map((f) => [f, importsOf(f).filter((i) => i.startsWith('.')).map((i) => target(f, i)).filter((t) => known.has(t))]));
}

/** Each import cycle among `files` once, as "a → b → a" (depth-first search, a cycle reported at its back edge). */
function importCycles(graph: Map<string, string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const next of graph.get(f) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return cycles;
}

describe('layering', () => {
  for (const layer of ['api', 'runtime', 'controller', 'agent', 'cli']) {
    it(`${layer}/ never imports etcd3 (only apiserver/ talks to etcd)`, () => {
      const offenders = sources(layer).filter((f) => importsOf(f).includes('etcd3'));
      expect(offenders).to.deep.equal([]);
    });
  }

  it('api/ imports nothing of ours outside api/', () => {
    const outside = (file: string, spec: string) => spec.startsWith('.') && !path.join(path.dirname(file), spec).startsWith(`api${path.sep}`);
    const offenders = sources('api').flatMap((f) => importsOf(f).filter((i) => outside(f, i)).map((i) => `${f} → ${i}`));
    expect(offenders).to.deep.equal([]);
  });

  it('the controller and the agent never import the apiserver (they reach it only over HTTP)', () => {
    const offenders = ['controller', 'agent'].flatMap((layer) => sources(layer).flatMap((f) => importsOf(f).filter((i) => /\/apiserver\//.test(i)).map((i) => `${f} → ${i}`)));
    expect(offenders).to.deep.equal([]);
  });

  // cli/commands/ may start a server in-process (`cairn server`); the client side of the CLI may not.
  it('the CLI\'s client code (cli/client/, cli/status/) never imports the apiserver', () => {
    const offenders = ['cli/client', 'cli/status'].flatMap((dir) => sources(dir).flatMap((f) => importsOf(f).filter((i) => /\/apiserver\//.test(i)).map((i) => `${f} → ${i}`)));
    expect(offenders).to.deep.equal([]);
  });

  it('apiserver/ does not import the controller, the agent or the CLI', () => {
    const offenders = sources('apiserver').flatMap((f) => importsOf(f).filter((i) => /\/(controller|agent|cli)\//.test(i)).map((i) => `${f} → ${i}`));
    expect(offenders).to.deep.equal([]);
  });

  it('runtime/ imports nothing of the controller, the agent, the apiserver or the CLI', () => {
    const offenders = sources('runtime').flatMap((f) => importsOf(f).filter((i) => /\/(controller|agent|apiserver|cli)\//.test(i)).map((i) => `${f} → ${i}`));
    expect(offenders).to.deep.equal([]);
  });

  it('the agent never imports the controller (what they share lives in runtime/)', () => {
    const offenders = sources('agent').flatMap((f) => importsOf(f).filter((i) => /\/controller\//.test(i)).map((i) => `${f} → ${i}`));
    expect(offenders).to.deep.equal([]);
  });

  for (const layer of ['runtime', 'agent', 'api']) {
    it(`${layer}/ has no import cycles`, () => {
      expect(importCycles(importGraph(sources(layer)))).to.deep.equal([]);
    });
  }

  it('the cycle check finds cycles', () => {
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []]]);
    expect(importCycles(graph)).to.deep.equal(['a → b → c → a']);
  });

  it('finds the sources it checks', () => {
    expect(sources('apiserver').length).to.be.greaterThan(20);
    expect(importsOf('apiserver/storage/etcd-store.ts')).to.include('etcd3');
    expect(sources('runtime').length).to.be.greaterThan(8);
  });
});
