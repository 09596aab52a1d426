import { expect } from 'chai';
import type { PrinterColumn } from '../../../../apiserver/resources.js';
import { evaluate, toTable, wantsTable } from '../../../../apiserver/rest/table.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { testDef } from '../helpers.js';

const NOW = Date.parse('2025-03-01T12:00:00Z');

describe('wantsTable', () => {
  const cases: [accept: string | undefined, table: boolean][] = [
    ['application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', true],
    ['application/json; as=Table; v=v1; g=meta.k8s.io', true],
    ['application/json,application/json;as=Table;g=meta.k8s.io;v=v1', true],
    ['application/json', false],
    ['application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', false],
    ['*/*', false],
    ['', false],
    [undefined, false],
  ];
  for (const [accept, table] of cases) {
    it(`${JSON.stringify(accept)} → ${table}`, () => {
      expect(wantsTable(accept)).to.equal(table);
    });
  }
});

describe('evaluate', () => {
  const obj = {
    metadata: { name: 'web' },
    spec: { cpus: 2, list: ['a', 'b'], flag: false },
    status: {
      conditions: [
        { type: 'Scheduled', status: 'True' },
        { type: 'Ready', status: 'False' },
      ],
    },
  };
  const cases: [path: string, value: unknown][] = [
    ['.metadata.name', 'web'],
    ['metadata.name', 'web'],
    ['$.metadata.name', 'web'],
    ['.spec.cpus', 2],
    ['.spec.flag', false],
    ['.spec.list[1]', 'b'],
    ['.spec', obj.spec],
    ['.status.conditions[?(@.type=="Ready")].status', 'False'],
    ['.status.conditions[?(@.type=="Scheduled")].status', 'True'],
    ['.status.conditions[?(@.type=="Missing")].status', undefined],
    ['.status.phase', undefined],
    ['.nope.deeper.still', undefined],
  ];
  for (const [path, value] of cases) {
    it(`${path} → ${JSON.stringify(value)}`, () => {
      expect(evaluate(path, obj)).to.deep.equal(value);
    });
  }

  it('returns undefined instead of throwing for malformed paths or non-objects', () => {
    for (const path of ['.status.conditions[?(@.type==', '[[[', '.a..b']) expect(() => evaluate(path, obj)).to.not.throw();
    expect(evaluate('.a.b', null)).to.equal(undefined);
    expect(evaluate('.a.b', 'str')).to.equal(undefined);
  });
});

describe('toTable', () => {
  const columns: PrinterColumn[] = [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Lifecycle phase.' },
    { name: 'CPUs', type: 'integer', jsonPath: '.spec.cpus' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Selector', type: 'string', jsonPath: '.spec.selector', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
  const def = testDef({ printerColumns: columns });
  const item = (name: string, created: string, extra: Partial<KubeObject> = {}): KubeObject => ({
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Widget',
    metadata: { name, namespace: 'default', labels: { app: name }, creationTimestamp: created, resourceVersion: '5' },
    ...extra,
  });
  const web = item('web', '2025-03-01T11:55:00Z', {
    spec: { cpus: '4', selector: { app: 'x' } },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const bare = item('bare', '2025-02-27T12:00:00Z');

  it('is a meta.k8s.io/v1 Table carrying the list metadata', () => {
    const t = toTable(def, [], { resourceVersion: '10', continue: 'tok' }, 'Metadata', NOW);
    expect(t).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    expect(t.metadata).to.deep.equal({ resourceVersion: '10', continue: 'tok' });
    expect(t.rows).to.deep.equal([]);
  });

  it('has the Name column first, then the printer columns with their priority', () => {
    const t = toTable(def, [], {}, 'Metadata', NOW);
    expect(t.columnDefinitions).to.deep.equal([
      { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
      { name: 'Phase', type: 'string', format: '', description: 'Lifecycle phase.', priority: 0 },
      { name: 'CPUs', type: 'integer', format: '', description: '', priority: 0 },
      { name: 'Ready', type: 'string', format: '', description: '', priority: 0 },
      { name: 'Selector', type: 'string', format: '', description: '', priority: 1 },
      { name: 'Age', type: 'date', format: '', description: '', priority: 0 },
    ]);
  });

  it('falls back to Name and Age when the kind declares no printer columns', () => {
    const t = toTable(testDef(), [web], {}, 'Metadata', NOW);
    expect((t.columnDefinitions as { name: string }[]).map((c) => c.name)).to.deep.equal(['Name', 'Age']);
    expect((t.rows as { cells: unknown[] }[])[0]!.cells).to.deep.equal(['web', '5m']);
  });

  it('renders cells: numbers as numbers, objects as JSON, dates as ages at `now`, missing values as null', () => {
    const t = toTable(def, [web, bare], {}, 'Metadata', NOW);
    const cells = (t.rows as { cells: unknown[] }[]).map((r) => r.cells);
    expect(cells).to.deep.equal([
      ['web', 'Running', 4, 'True', '{"app":"x"}', '5m'],
      ['bare', null, null, null, null, '2d'],
    ]);
  });

  it('renders an unparseable date as the raw string', () => {
    const t = toTable(def, [item('odd', 'not-a-date')], {}, 'Metadata', NOW);
    expect((t.rows as { cells: unknown[] }[])[0]!.cells.at(-1)).to.equal('not-a-date');
  });

  describe('row objects (includeObject)', () => {
    const rowObject = (include: 'None' | 'Metadata' | 'Object') => (toTable(def, [web], {}, include, NOW).rows as { object?: unknown }[])[0]!.object;

    it('Metadata: a PartialObjectMetadata with the full metadata', () => {
      expect(rowObject('Metadata')).to.deep.equal({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: web.metadata });
    });

    it('Object: the object itself', () => {
      expect(rowObject('Object')).to.deep.equal(web);
    });

    it('None: no object', () => {
      expect(rowObject('None')).to.equal(undefined);
    });
  });
});
