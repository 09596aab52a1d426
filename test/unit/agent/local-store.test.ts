/** LocalStore: the agent's copy of its WorkItems, their claim terms and the node's term, across restarts. */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkItem } from '../../../api/workitem.js';
import { LocalStore } from '../../../agent/local-store.js';
import { workItem } from '../../support/fixtures.js';

const item = (name: string, resourceVersion = '1'): WorkItem => {
  const w = workItem(name, 'c1', 'n1') as unknown as WorkItem;
  return { ...w, metadata: { ...w.metadata, uid: `uid-${name}`, resourceVersion } };
};
const fence = (term: string, lastRenewAt = 1000) => ({ record: () => ({ term, lastRenewAt, acquiredAt: '2026-01-01T00:00:00Z' }) });

describe('agent LocalStore', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-store-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const reopened = () => {
    const s = LocalStore.at(dir);
    s.load();
    return s;
  };

  it('keeps WorkItems, the claim terms of their instances and the node term across a restart', () => {
    const store = LocalStore.at(dir);
    store.put(item('a'));
    store.put(item('b'));
    store.recordClaim('c1/a', 'term-1');
    store.recordClaim('c1/b', 'term-0');
    store.recordFence(fence('term-1'));
    store.flush();
    const again = reopened();
    expect(again.list().map((w) => w.metadata.name).sort()).to.deep.equal(['a', 'b']);
    expect(again.claimedIn('term-1')).to.deep.equal(['c1/a']);
    expect(again.storedFence).to.include({ term: 'term-1', lastRenewAt: 1000 });
  });

  it('reports a background flush that cannot write (a full or read-only disk) and writes once it can, never throwing in its timer', async () => {
    const items = path.join(dir, 'workitems');
    fs.writeFileSync(items, 'not a directory'); // every write under it fails, as on a disk that refuses them
    const failures: string[] = [];
    const store = new LocalStore(items, path.join(dir, 'fencing.json'), 10, (err) => failures.push(err.message));
    store.put(item('a'));
    await new Promise((r) => setTimeout(r, 60));
    expect(failures.length, 'failed flushes reported').to.be.greaterThan(0);
    fs.rmSync(items);
    await new Promise((r) => setTimeout(r, 60));
    const again = new LocalStore(items, path.join(dir, 'fencing.json'));
    again.load();
    expect(again.list().map((w) => w.metadata.name)).to.deep.equal(['a']);
  });

  it('forgets a claim given up, and the claim of a deleted WorkItem', () => {
    const store = LocalStore.at(dir);
    store.put(item('a'));
    store.put(item('b'));
    store.recordClaim('c1/a', 'term-1');
    store.recordClaim('c1/b', 'term-1');
    store.flush();
    store.recordClaim('c1/a', undefined);
    store.delete('c1/b');
    store.flush();
    const again = reopened();
    expect(again.claimedIn('term-1')).to.deep.equal([]);
    expect(again.list().map((w) => w.metadata.name)).to.deep.equal(['a']);
  });

  it('has a claim given up on disk at once, before the API hears of it (a restart must not take it back)', () => {
    const store = LocalStore.at(dir);
    store.put(item('a'));
    store.recordClaim('c1/a', 'term-1');
    store.flush();
    store.recordClaim('c1/a', undefined); // no flush: as the claims do right before a release or hand-over
    expect(reopened().claimedIn('term-1')).to.deep.equal([]);
  });

  it('writes one file per changed WorkItem: a claim rewrites that WorkItem only', () => {
    const store = LocalStore.at(dir);
    for (const n of ['a', 'b', 'c']) store.put(item(n));
    store.flush();
    const file = (n: string) => path.join(dir, 'workitems', 'c1', `${n}.json`);
    const stamp = (n: string) => fs.statSync(file(n)).mtimeMs;
    for (const n of ['a', 'b', 'c']) fs.utimesSync(file(n), 0, 0);
    store.recordClaim('c1/b', 'term-1');
    store.put(item('c')); // same resourceVersion: nothing new
    store.flush();
    expect([stamp('a'), stamp('b') > 0, stamp('c')]).to.deep.equal([0, true, 0]);
  });

  it('loads a WorkItem file written by an older agent (the bare WorkItem), and sets a corrupt one aside', () => {
    const ns = path.join(dir, 'workitems', 'c1');
    fs.mkdirSync(ns, { recursive: true });
    fs.writeFileSync(path.join(ns, 'old.json'), JSON.stringify(item('old')));
    fs.writeFileSync(path.join(ns, 'torn.json'), '{"workItem": {"metad');
    const again = reopened();
    expect(again.list().map((w) => w.metadata.name)).to.deep.equal(['old']);
    expect(again.claimedIn('term-1')).to.deep.equal([]);
    expect(fs.readdirSync(ns).some((f) => f.startsWith('torn.json.corrupt-'))).to.equal(true);
  });

  it('starts with no term when fencing.json is missing or torn (a new term only fences earlier)', () => {
    expect(reopened().storedFence).to.equal(undefined);
    fs.writeFileSync(path.join(dir, 'fencing.json'), '{"term": "t", "lastRe');
    expect(reopened().storedFence).to.equal(undefined);
  });
});
