/** suite-cpu's report: the hook's log added up by process kind — pure. */
import { expect } from 'chai';
import { byKind, parseRecords, processKind } from '../../../hack/bench/suite-cpu-report.js';

describe('suite-cpu report', () => {
  it('names the kind of each process from its command line', () => {
    expect(processKind('/work/main/node_modules/.bin/mocha --exit dist/test/unit/**/*.test.js')).to.match(/^mocha/);
    expect(processKind('/work/main/bin/cairn.js server --data-dir /tmp/x --port 0')).to.equal('cairn server');
    expect(processKind('/w/dist/cli/main.js agent --kubeconfig k')).to.equal('cairn agent');
    expect(processKind('/w/dist/agent/operations/worker.js')).to.equal('agent operation workers');
    expect(processKind('/w/dist/bundle/worker.js')).to.equal('agent operation workers');
    expect(processKind('/tmp/x.js')).to.equal('other Node.js processes');
  });

  it('adds up CPU and counts per kind, largest first, and skips lines that are not records', () => {
    const log = ['1.5\t/b/cairn.js agent --node a', '0.5\t/b/cairn.js agent --node b', '4.0\t/n/mocha --exit', 'torn line', ''].join('\n');
    expect(parseRecords(log)).to.have.length(3);
    expect(byKind(parseRecords(log))).to.deep.equal([
      { kind: 'mocha (tests, and all they run in-process)', cpu: 4, count: 1 },
      { kind: 'cairn agent', cpu: 2, count: 2 },
    ]);
  });
});
