import { expect } from 'chai';
import { columnWidths, formatLine, tabwrite } from '../../../cli/client/tabwriter.js';
import { concatTables, formatCell, renderTable, tableHeader, TableStream, type ServerTable } from '../../../cli/client/table-printer.js';

// An Instance Table as the apiserver serves it (Name, then the CRD's printer columns).
const instances = (rows: [string, string, unknown, number | null, string][]): ServerTable => ({
  metadata: { resourceVersion: '42' },
  columnDefinitions: [
    { name: 'Name', type: 'string', format: 'name', priority: 0 },
    { name: 'Phase', type: 'string', priority: 0 },
    { name: 'Node', type: 'string', priority: 0 },
    { name: 'Restarts', type: 'integer', priority: 1 },
    { name: 'Run State', type: 'string', priority: 1 },
    { name: 'Age', type: 'date', priority: 0 },
  ],
  rows: rows.map(([name, phase, node, restarts, age]) => ({
    cells: [name, phase, node, restarts, 'Running', age],
    object: { metadata: { name, namespace: 'demo', labels: { app: name } } },
  })),
});

const table = instances([
  ['web', 'Running', 'node-a', 0, '5m'],
  ['database', 'Pending', null, null, '10s'],
]);

describe('tabwrite (Go text/tabwriter as kubectl uses it)', () => {
  it('pads every cell but the last to its column width plus the padding', () => {
    expect(tabwrite([['NAME', 'AGE'], ['database', '1m']], 3)).to.equal('NAME       AGE\ndatabase   1m');
  });

  it('shares a width only among consecutive lines that have the column', () => {
    const text = tabwrite([['Name:', 'web'], ['Spec:'], ['  Cpus:', '1'], ['  Termination Grace:', '10']], 2);
    expect(text.split('\n')).to.deep.equal(['Name:  web', 'Spec:', '  Cpus:               1', '  Termination Grace:  10']);
  });

  it('counts code points, not UTF-16 units', () => {
    expect(tabwrite([['é😀', 'x'], ['ab', 'y']], 1)).to.equal('é😀 x\nab y');
  });

  it('aligns a later row to the widths of earlier lines', () => {
    const widths = columnWidths([['NAME', 'AGE'], ['database', '1m']], 3);
    expect(widths).to.deep.equal([11, 6]);
    expect(formatLine(['web', '5m'], widths)).to.equal('web        5m');
  });
});

describe('renderTable', () => {
  it('prints priority-0 columns with upper-case headers and empty cells for null, as kubectl get', () => {
    expect(renderTable(table, {})).to.equal(['NAME       PHASE     NODE     AGE', 'web        Running   node-a   5m', 'database   Pending            10s', ''].join('\n'));
  });

  it('prints every column with -o wide', () => {
    expect(renderTable(table, { wide: true }).split('\n')[0]).to.equal('NAME       PHASE     NODE     RESTARTS   RUN STATE   AGE');
    expect(renderTable(table, { wide: true }).split('\n')[1]).to.equal('web        Running   node-a   0          Running     5m');
  });

  it('puts NAMESPACE first with -A, from each row\'s object metadata', () => {
    const lines = renderTable(table, { withNamespace: true }).split('\n');
    expect(lines[0]).to.match(/^NAMESPACE   NAME       PHASE/);
    expect(lines[1]).to.match(/^demo        web        Running/);
  });

  it('names rows kind.group/name when several kinds are printed, and adds LABELS with --show-labels', () => {
    const lines = renderTable(table, { namePrefix: 'instance.cairn.dev/', showLabels: true }).split('\n');
    expect(lines[0]).to.equal('NAME                          PHASE     NODE     AGE   LABELS');
    expect(lines[1]).to.equal('instance.cairn.dev/web        Running   node-a   5m    app=web');
  });

  it('drops the header with --no-headers and prints nothing for no rows', () => {
    expect(renderTable(table, {}, true).split('\n')[0]).to.equal('web        Running   node-a   5m');
    expect(renderTable(instances([]), {})).to.equal('');
  });

  it('joins the one-row tables of names read one by one', () => {
    const joined = concatTables([instances([['a', 'Running', 'n', 0, '1s']]), instances([['b', 'Running', 'n', 0, '2s']])]);
    expect(joined?.rows?.map((r) => r.cells[0])).to.deep.equal(['a', 'b']);
    expect(concatTables([])).to.equal(undefined);
  });

  it('headers follow the column selection', () => {
    expect(tableHeader(table.columnDefinitions, { wide: false, withNamespace: true })).to.deep.equal(['NAMESPACE', 'NAME', 'PHASE', 'NODE', 'AGE']);
  });
});

describe('formatCell', () => {
  it('prints cells as kubectl does', () => {
    expect(formatCell(null)).to.equal('');
    expect(formatCell(undefined)).to.equal('');
    expect(formatCell(false)).to.equal('false');
    expect(formatCell(3)).to.equal('3');
    expect(formatCell('first\nsecond')).to.equal('first...');
  });
});

describe('TableStream (get -w)', () => {
  it('prints the first table with its header, then later rows aligned under it', () => {
    const stream = new TableStream({});
    const first = stream.print(instances([['web', 'Pending', null, 0, '1s']]));
    expect(first).to.equal('NAME   PHASE     NODE   AGE\nweb    Pending          1s\n');
    expect(stream.print(instances([['web', 'Running', 'node-a', 0, '3s']]))).to.equal('web    Running   node-a   3s\n');
    expect(stream.print(instances([['web', 'Running', 'n', 0, '4s']]))).to.equal('web    Running   n        4s\n');
  });

  it('holds the header back until the first row when the collection starts empty', () => {
    const stream = new TableStream({});
    expect(stream.print(instances([]))).to.equal('');
    expect(stream.print(instances([['web', 'Pending', null, 0, '0s']]))).to.equal('NAME   PHASE     NODE   AGE\nweb    Pending          0s\n');
  });

  it('never prints a header with --no-headers', () => {
    expect(new TableStream({}, true).print(instances([['web', 'Running', 'n', 0, '1s']]))).to.equal('web   Running   n   1s\n');
  });
});
