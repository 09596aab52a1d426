/**
 * The health server over real HTTP on a free loopback port: /healthz and
 * /livez, /readyz answering 503 until ready, /metrics in Prometheus text
 * with the runtime's metrics (a queue's depth included), extra JSON routes,
 * and close().
 */
import { expect } from 'chai';
import { startHealthServer, type HealthServer } from '../../../runtime/health-server.js';
import { RuntimeMetrics } from '../../../runtime/metrics.js';
import { WorkQueue } from '../../../runtime/workqueue.js';
import { FakeClock } from '../../support/fake-clock.js';

async function get(url: string): Promise<{ status: number; type: string; text: string }> {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
}

describe('health server (real HTTP)', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('/healthz and /livez answer ok while healthy, 503 with the reason when not', async () => {
    let healthy: boolean | string = true;
    server = await startHealthServer({ host: '127.0.0.1', port: 0, registry: new RuntimeMetrics({ processMetrics: false }).registry, healthy: () => healthy, ready: () => true });
    expect(server.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const p of ['/healthz', '/livez']) expect(await get(server.url + p)).to.deep.include({ status: 200, text: 'ok' });
    healthy = 'leader lease not renewed for 12 s';
    expect(await get(`${server.url}/healthz`)).to.deep.include({ status: 503, text: 'leader lease not renewed for 12 s' });
    healthy = false;
    expect(await get(`${server.url}/livez`)).to.deep.include({ status: 503, text: 'not ok' });
  });

  it('/readyz is 503 until ready, then 200', async () => {
    let synced = false;
    server = await startHealthServer({ host: '127.0.0.1', port: 0, registry: new RuntimeMetrics({ processMetrics: false }).registry, healthy: () => true, ready: () => synced || 'caches not synced' });
    const before = await get(`${server.url}/readyz`);
    expect(before).to.deep.include({ status: 503, text: 'caches not synced' });
    expect(before.type).to.match(/^text\/plain/);
    synced = true;
    expect(await get(`${server.url}/readyz`)).to.deep.include({ status: 200, text: 'ok' });
  });

  it('/metrics serves the registry in Prometheus text, work-queue depth included', async () => {
    const metrics = new RuntimeMetrics();
    const q = new WorkQueue({ clock: new FakeClock(), metrics: metrics.forQueue('instances') });
    q.add('ns/a');
    q.add('ns/b');
    metrics.reconciles.inc({ controller: 'instances', result: 'success' });
    metrics.isLeader.set({ lease: 'cairn-controller' }, 1);
    server = await startHealthServer({ host: '127.0.0.1', port: 0, registry: metrics.registry, healthy: () => true, ready: () => true });
    const r = await get(`${server.url}/metrics`);
    expect(r.status).to.equal(200);
    expect(r.type).to.match(/^text\/plain; version=0\.0\.4/);
    expect(r.text).to.include('# TYPE cairn_workqueue_depth gauge');
    expect(r.text).to.match(/^cairn_workqueue_depth\{name="instances"\} 2$/m);
    expect(r.text).to.match(/^cairn_workqueue_adds_total\{name="instances"\} 2$/m);
    expect(r.text).to.match(/^cairn_reconcile_total\{controller="instances",result="success"\} 1$/m);
    expect(r.text).to.match(/^cairn_leader_is_leader\{lease="cairn-controller"\} 1$/m);
    expect(r.text, 'process metrics by default, with the cairn_ prefix').to.match(/^cairn_process_cpu_seconds_total /m);
    await q.get();
    expect((await get(`${server.url}/metrics`)).text).to.match(/^cairn_workqueue_depth\{name="instances"\} 1$/m);
  });

  it('serves extra JSON routes, 404 elsewhere, and stops listening on close()', async () => {
    let n = 0;
    server = await startHealthServer({ host: '127.0.0.1', port: 0, registry: new RuntimeMetrics({ processMetrics: false }).registry, healthy: () => true, ready: () => true, json: { '/status': () => ({ node: 'n1', calls: ++n }) } });
    const s = await get(`${server.url}/status`);
    expect(s.type).to.match(/^application\/json/);
    expect(JSON.parse(s.text)).to.deep.equal({ node: 'n1', calls: 1 });
    expect((await get(`${server.url}/nope`)).status).to.equal(404);
    const url = server.url;
    await server.close();
    server = undefined;
    let failed = false;
    await fetch(`${url}/healthz`).catch(() => (failed = true));
    expect(failed).to.equal(true);
  });

  it('refuses a port that is taken', async () => {
    server = await startHealthServer({ host: '127.0.0.1', port: 0, registry: new RuntimeMetrics({ processMetrics: false }).registry, healthy: () => true, ready: () => true });
    const port = Number(new URL(server.url).port);
    let err: unknown;
    await startHealthServer({ host: '127.0.0.1', port, registry: new RuntimeMetrics({ processMetrics: false }).registry, healthy: () => true, ready: () => true }).catch((e) => (err = e));
    expect((err as { code?: string }).code).to.equal('EADDRINUSE');
  });
});
