import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError } from '../../../cli/client/errors.js';
import { manifestFiles, missingFields, namespacesFirst, parseManifests, readManifests, selectManifests } from '../../../cli/client/manifests.js';

const instance = (name: string, extra = '') => `apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata:\n  name: ${name}\n${extra}spec:\n  cpus: 1\n`;
const names = (ms: { object: { metadata: { name: string } } }[]) => ms.map((m) => m.object.metadata.name);

describe('parseManifests', () => {
  it('reads every document of a multi-document file, skipping empty ones', () => {
    const ms = parseManifests(`${instance('a')}---\n# nothing here\n---\n${instance('b')}---\n`, 'x.yaml');
    expect(names(ms)).to.deep.equal(['a', 'b']);
    expect(ms.map((m) => m.document)).to.deep.equal([1, 3]);
    expect(ms[0]!.source).to.equal('x.yaml');
  });

  it('reads JSON', () => {
    const ms = parseManifests(JSON.stringify({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Volume', metadata: { name: 'data' }, spec: { size: '1Gi' } }), 'v.json');
    expect(ms[0]!.object.spec).to.deep.equal({ size: '1Gi' });
  });

  it('expands a List (and a <Kind>List) into its items', () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'a' } }, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Volume', metadata: { name: 'b' } }] };
    const ms = parseManifests(JSON.stringify(list), 'l.json');
    expect(names(ms)).to.deep.equal(['a', 'b']);
    expect(ms.map((m) => m.item)).to.deep.equal([1, 2]);
    expect(names(parseManifests(JSON.stringify({ ...list, kind: 'InstanceList' }), 'l.json'))).to.deep.equal(['a', 'b']);
  });

  it('names the file, line and column of a YAML syntax error', () => {
    const text = `${instance('a')}---\napiVersion: cairn.dev/v1alpha1\nkind: [Instance\nmetadata: {name: b}\n`;
    expect(() => parseManifests(text, 'broken.yaml')).to.throw(CliError, /^error parsing "broken\.yaml" \(line 1[01], column \d+\): /);
  });

  it('names the file, document and line of a document without apiVersion, kind or metadata.name', () => {
    const text = `${instance('a')}---\nkind: Instance\nmetadata:\n  labels: {a: b}\n`;
    expect(() => parseManifests(text, 'bad.yaml')).to.throw(CliError, 'error validating "bad.yaml" (document 2, line 7): apiVersion not set, metadata.name not set');
  });

  it('refuses a document that is not an object, and a List item that is not', () => {
    expect(() => parseManifests('- a\n- b\n', 's.yaml')).to.throw(CliError, /"s\.yaml" \(document 1, line 1\): the document is not an object/);
    expect(() => parseManifests('{"kind":"List","apiVersion":"v1","items":[{"kind":"Instance"}]}', 'l.json')).to.throw(CliError, /document 1, item 1, line 1\): apiVersion not set, metadata\.name not set/);
  });
});

describe('namespacesFirst', () => {
  it('puts Clusters and v1 Namespaces before the rest, keeping the input order otherwise (app.yaml sorts before cluster.yaml)', () => {
    const cluster = (name: string) => `apiVersion: cairn.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\n`;
    const ns = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;
    const ms = parseManifests([instance('a'), cluster('shop'), instance('b'), ns('other'), instance('c')].join('---\n'), 'x.yaml');
    expect(names(namespacesFirst(ms))).to.deep.equal(['shop', 'other', 'a', 'b', 'c']);
  });
});

describe('missingFields', () => {
  it('lists what a document lacks', () => {
    expect(missingFields({ apiVersion: 'v1', kind: 'X', metadata: { name: 'n' } })).to.deep.equal([]);
    expect(missingFields({ apiVersion: '', metadata: { name: 3 } })).to.deep.equal(['apiVersion', 'kind', 'metadata.name']);
  });
});

describe('readManifests and manifestFiles', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-manifests-'));
    fs.writeFileSync(path.join(dir, '20-b.yaml'), instance('b'));
    fs.writeFileSync(path.join(dir, '10-a.yml'), instance('a'));
    fs.writeFileSync(path.join(dir, '30-c.json'), JSON.stringify({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'c' } }));
    fs.writeFileSync(path.join(dir, 'README.md'), 'not a manifest');
    fs.mkdirSync(path.join(dir, '15-sub'));
    fs.writeFileSync(path.join(dir, '15-sub', 'x.yaml'), instance('sub'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads a directory in name order, only .yaml/.yml/.json, without subdirectories', () => {
    expect(names(readManifests([dir]))).to.deep.equal(['a', 'b', 'c']);
  });

  it('descends into subdirectories with -R, where their names sort', () => {
    expect(names(readManifests([dir], { recursive: true }))).to.deep.equal(['a', 'sub', 'b', 'c']);
    expect(manifestFiles(dir, true).map((f) => path.relative(dir, f))).to.deep.equal(['10-a.yml', path.join('15-sub', 'x.yaml'), '20-b.yaml', '30-c.json']);
  });

  it('reads files and standard input in argument order', () => {
    const ms = readManifests([path.join(dir, '30-c.json'), '-', path.join(dir, '10-a.yml')], { readStdin: () => instance('in') });
    expect(names(ms)).to.deep.equal(['c', 'in', 'a']);
    expect(ms[1]!.source).to.equal('STDIN');
  });

  it('names a path that does not exist, and asks for -f', () => {
    expect(() => readManifests([path.join(dir, 'nope.yaml')])).to.throw(CliError, /the path ".*nope\.yaml" does not exist/);
    expect(() => readManifests([])).to.throw(CliError, 'must specify -f');
  });
});

describe('selectManifests', () => {
  const ms = parseManifests(`${instance('a', '  labels: {app: x}\n')}---\n${instance('b', '  labels: {app: y}\n')}---\n${instance('c')}`, 'x.yaml');

  it('keeps the objects whose labels match, all without a selector', () => {
    expect(names(selectManifests(ms, 'app=x'))).to.deep.equal(['a']);
    expect(names(selectManifests(ms, 'app'))).to.deep.equal(['a', 'b']);
    expect(names(selectManifests(ms, undefined))).to.deep.equal(['a', 'b', 'c']);
  });

  it('refuses a selector that does not parse', () => {
    expect(() => selectManifests(ms, 'app in x')).to.throw(CliError, /invalid label selector "app in x"/);
  });
});
