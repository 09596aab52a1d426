import { expect } from 'chai';
import { summarize } from '../../../cli/status/model.js';
import { bar, clock, renderChange, renderConnectionChange, renderConnectionLost, renderProgress, renderSummary } from '../../../cli/status/render.js';
import { missingClusterNote } from '../../../cli/status/snapshot.js';
import { JsonLinesView, PlainView, TERMINAL, TerminalView } from '../../../cli/status/views.js';
import { cluster, instance, node, objects, tooBigVolume, unschedulableInstance, volume } from './status-fixtures.js';

const NOW = new Date(2024, 4, 1, 12, 0, 1);
const CTX = { server: 'https://127.0.0.1:6443', allNamespaces: false, namespace: 'demo' };
const ESCAPE = /\x1b/;
const LOST = { since: new Date(2024, 4, 1, 11, 59, 30), error: 'socket hang up' };

function eightOfTen() {
  return summarize(
    objects({
      clusters: [cluster()],
      nodes: [node('node-a', { cpus: 2 }), node('node-b')],
      instances: [...['a', 'b', 'c', 'd', 'e'].map((n) => instance(n, { nodeName: 'node-a' })), unschedulableInstance('big')],
      volumes: [volume('v1'), tooBigVolume('huge')],
    }),
  );
}

class Sink {
  text = '';
  columns?: number;
  rows?: number;
  write(t: string) {
    this.text += t;
  }
}

describe('status rendering', () => {
  describe('bar', () => {
    const cases: [number, number | undefined, string][] = [
      [0, 10, '[----------]'],
      [8, 10, '[########--]'],
      [10, 10, '[##########]'],
      [2, 4, '[#####-----]'],
      [99, 100, '[#########-]'],
      [1, 100, '[#---------]'],
      [12, 10, '[##########]'],
      [3, undefined, '[----------]'],
      [0, 0, '[----------]'],
    ];
    for (const [used, total, text] of cases) it(`${used}/${total} → ${text}`, () => expect(bar(used, total)).to.equal(text));
  });

  describe('renderSummary', () => {
    const lines = renderSummary(eightOfTen(), { ...CTX, now: NOW });
    const text = lines.join('\n');

    it('heads with the cluster, the server and the time', () => {
      expect(lines[0]).to.match(/^Cluster demo \(Ready\) +server https:\/\/127\.0\.0\.1:6443 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    });

    it('draws a line per node with allocation bars and the instance count', () => {
      expect(text).to.contain('NODES 2 (2 Ready)');
      expect(lines.find((l) => l.includes('node-a'))).to.match(/node-a +Ready +cpu \[#####-----\] 2\/4 +memory \[###-------\] 1024Mi\/4Gi +instances 2/);
      expect(lines.find((l) => l.includes('node-b'))).to.match(/cpu \[----------\] 0\/4/);
    });

    it('counts instances and volumes by phase', () => {
      expect(text).to.contain('INSTANCES 6   Pending 1  Running 5');
      expect(text).to.contain('VOLUMES 2   Pending 1  Ready 1');
    });

    it('draws the convergence bar', () => expect(text).to.contain('converged [########--] 8/10'));

    it('lists the failing items with reason and message', () => {
      expect(text).to.contain('FAILING 2');
      expect(text).to.contain('instance demo/big  Unschedulable: 0/2 nodes are available: 2 insufficient cpu.');
      expect(text).to.contain('volume demo/huge  Unschedulable: 0/2 nodes are available: 2 insufficient storage.');
      expect(text).to.contain('cairn failures');
    });

    it('has no escape codes', () => expect(text).not.to.match(ESCAPE));

    it('marks a cordoned node and a namespace without a Cluster object', () => {
      const s = summarize(objects({ nodes: [node('node-a', { cordoned: true })] }));
      const t = renderSummary(s, { ...CTX, now: NOW }).join('\n');
      expect(t).to.contain('Cluster demo (no Cluster object)');
      expect(t).to.contain('node-a  Ready,SchedulingDisabled');
      expect(t).not.to.contain('FAILING');
    });

    it('qualifies node names with -A', () => {
      const t = renderSummary(summarize(objects({ nodes: [node('node-a')] })), { ...CTX, allNamespaces: true, now: NOW }).join('\n');
      expect(t).to.contain('demo/node-a');
    });
  });

  describe('change lines', () => {
    it('a state change', () => {
      expect(renderChange({ kind: 'instance', namespace: 'demo', name: 'web', from: 'Pending', to: 'Running' }, NOW)).to.equal('12:00:01 instance demo/web Pending → Running');
    });
    it('a new and a deleted object', () => {
      expect(renderChange({ kind: 'volume', namespace: 'demo', name: 'data', to: 'Pending' }, NOW)).to.equal('12:00:01 volume demo/data created: Pending');
      expect(renderChange({ kind: 'volume', namespace: 'demo', name: 'data', from: 'Ready' }, NOW)).to.equal('12:00:01 volume demo/data deleted');
    });
    it('the convergence count', () => expect(renderProgress(eightOfTen(), NOW)).to.equal('12:00:01 converged [########--] 8/10, 2 failing'));
    it('clock pads', () => expect(clock(new Date(2024, 0, 1, 1, 2, 3))).to.equal('01:02:03'));
  });

  describe('connection lines', () => {
    it('the header while the server is away', () => expect(renderConnectionLost(LOST)).to.equal('connection lost since 11:59:30 (socket hang up), retrying'));
    it('the lines logged when lost and when back', () => {
      expect(renderConnectionChange(LOST, NOW)).to.equal('12:00:01 connection lost since 11:59:30 (socket hang up), retrying');
      expect(renderConnectionChange(undefined, NOW)).to.equal('12:00:01 connection back');
    });
  });

  describe('missingClusterNote', () => {
    it('lists the Clusters there are instead', () => {
      expect(missingClusterNote('default', ['demo', 'prod'])).to.equal('no Cluster "default"; the Clusters are demo, prod: use -n NAME or -A');
      expect(missingClusterNote('default', ['demo'])).to.equal('no Cluster "default"; the Cluster is demo: use -n NAME or -A');
    });
    it('says when there is no Cluster at all', () => expect(missingClusterNote('default', [])).to.match(/^no Cluster "default", and there are no Clusters/));
  });

  describe('PlainView', () => {
    it('prints the block once, then one line per change and per convergence move, never an escape code', () => {
      const out = new Sink();
      const view = new PlainView(out, CTX, () => NOW);
      const s = eightOfTen();
      view.start(s);
      view.change({ kind: 'instance', namespace: 'demo', name: 'web', from: 'Pending', to: 'Running' });
      view.update(s);
      const better = summarize(objects({ nodes: [node('node-a')] }));
      view.update(better);
      view.finish(better, true);
      const lines = out.text.trimEnd().split('\n');
      expect(lines.filter((l) => l.startsWith('Cluster '))).to.have.length(1);
      expect(lines.slice(-2)).to.deep.equal(['12:00:01 instance demo/web Pending → Running', '12:00:01 converged [##########] 1/1']);
      expect(out.text).not.to.match(ESCAPE);
    });

    it('ends with the final block when lines followed the first one and it was not interrupted', () => {
      const out = new Sink();
      const view = new PlainView(out, CTX, () => NOW);
      view.start(eightOfTen());
      view.change({ kind: 'instance', namespace: 'demo', name: 'web', from: 'Pending', to: 'Running' });
      view.finish(eightOfTen(), false);
      expect(out.text.split('\n').filter((l) => l.startsWith('Cluster '))).to.have.length(2);
    });

    it('does not repeat the block when nothing changed since it', () => {
      const out = new Sink();
      const view = new PlainView(out, CTX, () => NOW);
      view.start(eightOfTen());
      view.finish(eightOfTen(), false);
      expect(out.text.split('\n').filter((l) => l.startsWith('Cluster '))).to.have.length(1);
    });

    it('logs one line when the connection is lost and one when it is back', () => {
      const out = new Sink();
      const view = new PlainView(out, CTX, () => NOW);
      view.start(eightOfTen());
      view.connection(LOST);
      view.connection({ ...LOST, error: 'connect ECONNREFUSED' });
      view.connection(undefined);
      view.connection(undefined);
      const lines = out.text.trimEnd().split('\n');
      expect(lines.slice(-2)).to.deep.equal(['12:00:01 connection lost since 11:59:30 (socket hang up), retrying', '12:00:01 connection back']);
      expect(lines.filter((l) => l.includes('connection'))).to.have.length(2);
    });
  });

  describe('TerminalView', () => {
    it('heads the block with the lost connection until it is back', () => {
      const out = new Sink();
      out.columns = 200;
      out.rows = 50;
      const view = new TerminalView(out, CTX, () => NOW);
      const s = eightOfTen();
      const height = renderSummary(s, { ...CTX, now: NOW }).length;
      view.start(s);
      let mark = out.text.length;
      view.connection(LOST);
      const lost = out.text.slice(mark);
      expect(lost.startsWith(TERMINAL.up(height))).to.equal(true, 'redrawn at once, over the previous block');
      expect(lost.slice(TERMINAL.up(height).length).split('\n')[0]).to.equal(`connection lost since 11:59:30 (socket hang up), retrying${TERMINAL.clearToLineEnd}`);
      mark = out.text.length;
      view.update(s);
      expect(out.text.slice(mark)).to.contain('connection lost since', 'kept on later redraws');
      mark = out.text.length;
      view.connection(undefined);
      const back = out.text.slice(mark);
      expect(back.startsWith(TERMINAL.up(height + 1))).to.equal(true, 'backs up over the header line too');
      expect(back).not.to.contain('connection lost');
    });

    it('hides the cursor, redraws over the previous block, clears below, and restores the cursor', () => {
      const out = new Sink();
      out.columns = 200;
      out.rows = 50;
      const view = new TerminalView(out, CTX, () => NOW);
      const s = eightOfTen();
      view.start(s);
      const first = out.text;
      const height = renderSummary(s, { ...CTX, now: NOW }).length;
      expect(first.startsWith(TERMINAL.hideCursor)).to.equal(true);
      expect(first).not.to.contain(TERMINAL.up(height));
      view.update(s);
      expect(out.text.slice(first.length).startsWith(TERMINAL.up(height))).to.equal(true);
      expect(out.text.endsWith(TERMINAL.clearToScreenEnd)).to.equal(true);
      view.finish(s);
      expect(out.text.endsWith(TERMINAL.showCursor)).to.equal(true);
    });

    it('cuts lines to the terminal width and the block to its height, so counting lines stays right', () => {
      const out = new Sink();
      out.columns = 40;
      out.rows = 8;
      new TerminalView(out, CTX, () => NOW).start(eightOfTen());
      const lines = out.text.replace(TERMINAL.hideCursor, '').split('\n').slice(0, -1);
      expect(lines).to.have.length(7);
      for (const l of lines) expect(l.replace(TERMINAL.clearToLineEnd, '').length).to.be.at.most(39);
    });
  });

  describe('JsonLinesView', () => {
    it('prints a ConnectionState document when the connection is lost and when it is back', () => {
      const out = new Sink();
      const view = new JsonLinesView(out, CTX, () => NOW);
      view.connection(LOST);
      view.connection(undefined);
      const docs = out.text.trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(docs).to.deep.equal([
        { kind: 'ConnectionState', server: CTX.server, time: NOW.toISOString(), connected: false, since: LOST.since.toISOString(), error: 'socket hang up' },
        { kind: 'ConnectionState', server: CTX.server, time: NOW.toISOString(), connected: true },
      ]);
    });

    it('prints one JSON document per update', () => {
      const out = new Sink();
      const view = new JsonLinesView(out, CTX, () => NOW);
      view.start(eightOfTen());
      view.update(eightOfTen());
      const docs = out.text.trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(docs).to.have.length(2);
      expect(docs[0]).to.deep.include({ kind: 'StatusSummary', server: CTX.server });
      expect(docs[0].convergence).to.deep.include({ converged: 8, total: 10 });
    });
  });
});
