/**
 * Acceptance 1 of issue 2, first part: stock kubectl 1.32 against a real
 * `cairn server` process — discovery (`api-resources`), client-side `apply`
 * of examples/ (created / unchanged / configured), printer columns
 * (`get -o wide`), the `cairn` category, `explain` from the OpenAPI v3
 * documents, and `diff`.
 *
 * One server for the file; every test uses its own object names. The
 * examples test runs first (mocha runs a suite's own tests before its nested
 * suites), so it sees a fresh store; the nested suite makes sure the `demo`
 * Cluster (and so the namespace) exists on its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { CRD_DIR, EXAMPLES_DIR } from '../support/paths.js';
import { useKubectlEnv } from '../support/kubectl-env.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: unknown }; spec?: any };
type PrinterColumn = { name: string; priority?: number };

/** Every document of every manifest in examples/. */
function exampleObjects(): Obj[] {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((f) => YAML.parseAllDocuments(fs.readFileSync(path.join(EXAMPLES_DIR, f), 'utf8')).map((d) => d.toJS() as Obj | null))
    .filter((o): o is Obj => !!o);
}

/** The first version of a CRD from crds/. */
function crdVersion(file: string): any {
  return YAML.parse(fs.readFileSync(path.join(CRD_DIR, file), 'utf8')).spec.versions[0];
}

/** kubectl's reference for an object: `instance.cairn.dev/ticker`. */
const ref = (o: Obj) => `${o.kind.toLowerCase()}.cairn.dev/${o.metadata.name}`;

/** Collapses whitespace, so text kubectl wraps at 80 columns compares to the CRD's. */
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Splits one aligned kubectl table into its header and rows keyed by column name. */
function parseTable(out: string): { header: string[]; rows: Record<string, string>[] } {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const header: string[] = [];
  const starts: number[] = [];
  for (const m of lines[0]!.matchAll(/\S+(?: \S+)*/g)) {
    header.push(m[0]);
    starts.push(m.index!);
  }
  const rows = lines.slice(1).map((l) => Object.fromEntries(header.map((h, i) => [h, l.slice(starts[i], starts[i + 1]).trim()])));
  return { header, rows };
}

describe('kubectl e2e: discovery, apply, printer columns, explain, diff', function () {
  this.timeout(60_000);
  const env = useKubectlEnv('cairn-kubectl-apply-');

  /** Writes objects as one multi-document YAML manifest in the temp dir. */
  const write = (file: string, ...objs: object[]) => {
    const p = path.join(env.tmp, file);
    fs.writeFileSync(p, objs.map((o) => YAML.stringify(o)).join('---\n'));
    return p;
  };
  const jsonpath = (what: string, expr: string) => env.kubectl.ok(['get', what, '-n', 'demo', '-o', `jsonpath={${expr}}`]);

  it('kubectl api-resources lists the Cairn kinds, leases, events and namespaces', async () => {
    const { rows } = parseTable(await env.kubectl.ok(['api-resources']));
    const byName = new Map(rows.map((r) => [r.NAME!, r]));
    const expected: [string, string, string, string][] = [
      ['clusters', 'cairn.dev/v1alpha1', 'false', 'Cluster'],
      ['nodes', 'cairn.dev/v1alpha1', 'true', 'Node'],
      ['instances', 'cairn.dev/v1alpha1', 'true', 'Instance'],
      ['volumes', 'cairn.dev/v1alpha1', 'true', 'Volume'],
      ['workitems', 'cairn.dev/v1alpha1', 'true', 'WorkItem'],
      ['leases', 'coordination.k8s.io/v1', 'true', 'Lease'],
      ['events', 'v1', 'true', 'Event'],
      ['namespaces', 'v1', 'false', 'Namespace'],
    ];
    for (const [name, apiVersion, namespaced, kind] of expected) {
      expect(byName.get(name), `api-resources row for ${name}`).to.include({ APIVERSION: apiVersion, NAMESPACED: namespaced, KIND: kind });
    }
    expect(byName.get('instances')!.SHORTNAMES).to.equal('inst');
  });

  it('kubectl apply -f examples/ creates every kind, re-applies as unchanged, and a spec change is configured with a new generation', async () => {
    const objs = exampleObjects();
    expect(new Set(objs.map((o) => o.kind))).to.have.keys('Cluster', 'Node', 'Volume', 'Instance', 'WorkItem');
    const lines = (out: string) => out.trim().split('\n').sort();

    expect(lines(await env.kubectl.ok(['apply', '-f', EXAMPLES_DIR]))).to.deep.equal(objs.map((o) => `${ref(o)} created`).sort());
    expect(lines(await env.kubectl.ok(['apply', '-f', EXAMPLES_DIR]))).to.deep.equal(objs.map((o) => `${ref(o)} unchanged`).sort());

    const instances = YAML.parseAllDocuments(fs.readFileSync(path.join(EXAMPLES_DIR, '25-instances.yaml'), 'utf8')).map((d) => d.toJS() as Obj);
    const ticker = instances.find((o) => o.metadata.name === 'ticker')!;
    const cpus = Number(ticker.spec.cpus ?? 1) + 1;
    ticker.spec.cpus = cpus;
    expect(await jsonpath('instance/ticker', '.metadata.generation')).to.equal('1');
    const out = await env.kubectl.ok(['apply', '-f', write('instances-changed.yaml', ...instances)]);
    expect(lines(out)).to.deep.equal(instances.map((o) => `${ref(o)} ${o === ticker ? 'configured' : 'unchanged'}`).sort());
    expect(await jsonpath('instance/ticker', '.spec.cpus')).to.equal(String(cpus));
    expect(await jsonpath('instance/ticker', '.metadata.generation')).to.equal('2');
    expect(await jsonpath('instance/writer', '.metadata.generation')).to.equal('1');
  });

  describe('with the demo cluster present', function () {
    before(async () => {
      await env.kubectl.ok(['apply', '-f', path.join(EXAMPLES_DIR, '00-cluster.yaml')]);
    });

    const instance = (name: string, spec: Record<string, unknown> = {}) => ({
      apiVersion: 'cairn.dev/v1alpha1',
      kind: 'Instance',
      metadata: { name, namespace: 'demo' },
      spec: { cpus: 1, memory: '32Mi', process: { command: ['/bin/sleep', '3600'] }, ...spec },
    });

    it('kubectl get instances -o wide shows the priority-1 printer columns that plain get hides', async () => {
      await env.kubectl.ok(['apply', '-f', write('wide.yaml', instance('wide-1', { cpus: 2, memory: '48Mi', runState: 'Stopped' }))]);
      await env.kubectl.ok(['patch', 'instance', 'wide-1', '-n', 'demo', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Stopped","restarts":3}}']);
      const columns = crdVersion('instance.yaml').additionalPrinterColumns as PrinterColumn[];
      const upper = (cs: PrinterColumn[]) => ['NAME', ...cs.map((c) => c.name.toUpperCase())];

      const wide = parseTable(await env.kubectl.ok(['get', 'instances', '-n', 'demo', '-o', 'wide']));
      expect(wide.header).to.deep.equal(upper(columns));
      expect(wide.header).to.include.members(['RESTARTS', 'RUN STATE']);
      expect(wide.rows.find((r) => r.NAME === 'wide-1')).to.include({ PHASE: 'Stopped', DRIVER: 'process', CPUS: '2', MEMORY: '48Mi', RESTARTS: '3', 'RUN STATE': 'Stopped' });

      const plain = parseTable(await env.kubectl.ok(['get', 'instances', '-n', 'demo']));
      expect(plain.header).to.deep.equal(upper(columns.filter((c) => !c.priority)));
      expect(plain.header).not.to.include('RESTARTS');
      expect(plain.rows.find((r) => r.NAME === 'wide-1')).to.include({ PHASE: 'Stopped', CPUS: '2', MEMORY: '48Mi' });
    });

    it('kubectl get cairn -A lists objects of every Cairn kind', async () => {
      // One object of each namespaced kind, copied from the examples under new names.
      const copies = exampleObjects()
        .filter((o) => o.kind !== 'Cluster')
        .filter((o, i, all) => all.findIndex((x) => x.kind === o.kind) === i)
        .map((o) => ({ ...o, metadata: { ...o.metadata, name: `all-${o.kind.toLowerCase()}` } }));
      await env.kubectl.ok(['apply', '-f', write('all-kinds.yaml', ...copies)]);
      const out = await env.kubectl.ok(['get', 'cairn', '-A']);
      expect(out).to.match(/^\s*cluster\.cairn\.dev\/demo\s/m);
      for (const o of copies) expect(out).to.match(new RegExp(`^demo\\s+${ref(o).replace(/\./g, '\\.')}\\s`, 'm'));
    });

    it('kubectl explain instance.spec and instance.spec.cpus describe the fields from the CRD', async () => {
      const spec = crdVersion('instance.yaml').schema.openAPIV3Schema.properties.spec;
      const out = await env.kubectl.ok(['explain', 'instance.spec']);
      expect(squash(out)).to.contain('KIND: Instance').and.contain('VERSION: v1alpha1').and.contain('FIELD: spec <Object>');
      expect(squash(out)).to.contain(squash(spec.description));
      for (const field of Object.keys(spec.properties)) expect(out).to.match(new RegExp(`^ {2}${field}\\s+<`, 'm'), `field ${field}`);
      expect(squash(out)).to.contain(squash(spec.properties.cpus.description));

      const cpus = squash(await env.kubectl.ok(['explain', 'instance.spec.cpus']));
      expect(cpus).to.contain('FIELD: cpus <integer>');
      expect(cpus).to.contain(squash(spec.properties.cpus.description));
    });

    it('kubectl diff -f exits 0 when the file matches the live object and 1 with a diff when it differs', async () => {
      const file = write('diff.yaml', instance('diff-1', { cpus: 1 }));
      await env.kubectl.ok(['apply', '-f', file]);
      const same = await env.kubectl.run(['diff', '-f', file]);
      expect(same.code, same.stderr).to.equal(0);
      expect(same.stdout).to.equal('');

      const changed = await env.kubectl.run(['diff', '-f', write('diff-changed.yaml', instance('diff-1', { cpus: 2 }))]);
      expect(changed.code, changed.stderr).to.equal(1);
      expect(changed.stdout).to.match(/^-\s+cpus: 1$/m).and.match(/^\+\s+cpus: 2$/m);
      // The server-side dry run behind diff wrote nothing.
      expect(await jsonpath('instance/diff-1', '.spec.cpus')).to.equal('1');
      expect(await jsonpath('instance/diff-1', '.metadata.generation')).to.equal('1');

      // An object that does not exist yet diffs as wholly new (a dry-run create) and stays absent.
      const fresh = await env.kubectl.run(['diff', '-f', write('diff-new.yaml', instance('diff-new', { cpus: 2 }))]);
      expect(fresh.code, fresh.stderr).to.equal(1);
      expect(fresh.stdout).to.match(/^\+\s+name: diff-new$/m).and.match(/^\+\s+cpus: 2$/m);
      const absent = await env.kubectl.run(['get', 'instance', 'diff-new', '-n', 'demo']);
      expect(absent.code).to.equal(1);
      expect(absent.stderr).to.contain('NotFound');
    });
  });
});
