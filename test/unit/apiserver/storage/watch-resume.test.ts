import { expect } from 'chai';
import { Watcher } from 'etcd3';
import { resumeAfterDelivered } from '../../../../apiserver/storage/watch-resume.js';

describe('etcd watch resumption', () => {
  /** A real etcd3 Watcher on a manager that never connects: its events are the test's to emit. */
  function watcher(startRevision: number): Watcher {
    const manager = { attach: () => undefined, detach: () => Promise.resolve() };
    const namespace = { unprefix: (k: Buffer) => k };
    return new Watcher(manager as never, namespace as never, { key: Buffer.from('/'), start_revision: String(startRevision) });
  }

  it("resumes from the revision after the last event delivered, not after a header's (etcd's current revision at the reconnect)", () => {
    const w = watcher(11);
    let delivered = 10;
    resumeAfterDelivered(w, () => delivered);
    w.emit('connected', { header: { revision: '1000' } }); // the catch-up from 11 to 1000 is still to come
    expect(w.request.start_revision, 'what etcd3 alone would resume from').to.equal('1001');
    delivered = 57; // part of it came before the stream dropped
    w.emit('disconnected', new Error('stream reset'));
    expect(w.request.start_revision).to.equal('58');
  });
});
