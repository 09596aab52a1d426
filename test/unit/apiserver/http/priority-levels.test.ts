/** Priority levels: which requests take a workload seat, and how seats are handed out. */
import { expect } from 'chai';
import { priorityLevel, WorkloadSeats } from '../../../../apiserver/http/priority-levels.js';
import { ApiError } from '../../../../apiserver/errors.js';

const admin = { groups: ['system:masters'] };
const node = { groups: ['system:nodes'] };
const instances = { group: 'cairn.dev', plural: 'instances' };

describe('priorityLevel', () => {
  it('serves Leases and node identities apart, watches and streams without a seat, the rest as workload', () => {
    expect(priorityLevel(admin, { group: 'coordination.k8s.io', plural: 'leases' }, 'update', {})).to.equal('leases');
    expect(priorityLevel(node, { group: 'cairn.dev', plural: 'workitems' }, 'update', {})).to.equal('leases');
    expect(priorityLevel(admin, instances, 'watch', { watch: 'true' })).to.equal('exempt');
    expect(priorityLevel(admin, { ...instances, subresource: 'log' }, 'get', { follow: 'true' })).to.equal('exempt');
    expect(priorityLevel(admin, { ...instances, subresource: 'console' }, 'get', {})).to.equal('exempt');
    expect(priorityLevel(admin, instances, 'list', {})).to.equal('workload');
    expect(priorityLevel(admin, { ...instances, subresource: 'log' }, 'get', {})).to.equal('workload');
  });

  it('counts as long-running whatever the handlers follow or watch, and nothing else', () => {
    const log = { ...instances, subresource: 'log' };
    for (const follow of ['', '1', 'true', ['true', 'true']]) expect(priorityLevel(admin, log, 'get', { follow }), JSON.stringify(follow)).to.equal('exempt');
    for (const follow of ['false', '0', 'yes']) expect(priorityLevel(admin, log, 'get', { follow }), follow).to.equal('workload');
    expect(priorityLevel(admin, instances, 'create', { follow: 'true' })).to.equal('workload');
    expect(priorityLevel(admin, instances, 'list', { follow: 'true' })).to.equal('workload');
    expect(priorityLevel(admin, instances, 'create', { watch: 'true' })).to.equal('workload');
  });

  it('serves status writes, WorkItems and Events as progress: work already accepted', () => {
    expect(priorityLevel(admin, { ...instances, subresource: 'status' }, 'update', {})).to.equal('progress');
    expect(priorityLevel(admin, { group: 'cairn.dev', plural: 'workitems' }, 'create', {})).to.equal('progress');
    expect(priorityLevel(admin, { group: '', plural: 'events' }, 'create', {})).to.equal('progress');
    expect(priorityLevel(admin, { group: 'events.k8s.io', plural: 'events' }, 'create', {})).to.equal('progress');
    expect(priorityLevel(admin, { group: 'cairn.dev', plural: 'volumes' }, 'create', {})).to.equal('workload');
  });
});

describe('WorkloadSeats', () => {
  it('serves at most `seats` at once, the rest in arrival order, and refuses with 429 beyond the queue', async () => {
    const seats = new WorkloadSeats(2, 2);
    const a = await seats.take();
    const b = await seats.take();
    const order: string[] = [];
    const c = seats.take().then((r) => (order.push('c'), r));
    const d = seats.take().then((r) => (order.push('d'), r));
    expect(seats.state).to.deep.equal({ busy: 2, waiting: 2 });
    const refused = await seats.take().catch((err: ApiError) => err);
    expect(refused).to.be.instanceOf(ApiError).and.include({ code: 429, reason: 'TooManyRequests' });
    expect((refused as ApiError).details?.retryAfterSeconds).to.equal(1);
    a();
    a(); // a second release of one seat gives nothing more
    await c;
    expect(order).to.deep.equal(['c']);
    expect(seats.state).to.deep.equal({ busy: 2, waiting: 1 });
    b();
    (await d)();
    (await c)();
    expect(seats.state).to.deep.equal({ busy: 0, waiting: 0 });
  });

  it('gives a freed seat to waiting progress before waiting workload, within one queue limit', async () => {
    const seats = new WorkloadSeats(1, 3);
    const first = await seats.take('workload');
    const order: string[] = [];
    const waiter = (name: string, level: 'progress' | 'workload') => seats.take(level).then((release) => (order.push(name), release));
    const w1 = waiter('w1', 'workload');
    const w2 = waiter('w2', 'workload');
    const p1 = waiter('p1', 'progress');
    const refused = await seats.take('progress').catch((err: ApiError) => err);
    expect(refused).to.be.instanceOf(ApiError).and.include({ code: 429 });
    first();
    (await p1)();
    (await w1)();
    (await w2)();
    expect(order).to.deep.equal(['p1', 'w1', 'w2']);
    expect(seats.state).to.deep.equal({ busy: 0, waiting: 0 });
  });

  it('has no limit with 0 seats', async () => {
    const seats = new WorkloadSeats(0, 0);
    await Promise.all(Array.from({ length: 100 }, () => seats.take()));
    expect(seats.state).to.deep.equal({ busy: 0, waiting: 0 });
  });
});
