/**
 * Issue 17, defects 2 and 3: requests built to stall the event loop or to
 * store a poison object are answered with a 4xx at once, and the server
 * (here in this process, so its event loop is this one) never blocks for
 * long. Each case once blocked for seconds to minutes, answered 500, or
 * was stored and broke every later PATCH.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { expect } from 'chai';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { rawRequest, type RawRequest, type RawResponse } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';
import { openWatch } from '../../support/watch-stream.js';

const APPLY = 'application/apply-patch+yaml';
const JSON_PATCH = 'application/json-patch+json';

/** `{"a": {"a": ... value ...}}`, `depth` levels deep. */
function nested(depth: number, value: unknown = {}): unknown {
  let v = value;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('apiserver hostile input (issue 17)', function () {
  this.timeout(120_000);
  let env: TestEnv;
  const ns = 'hostile';
  const inst = cairnPath('instances', ns);
  const send = (r: RawRequest) => rawRequest(env.kubeconfig, r);

  before(async () => {
    env = await startTestEnv();
    await send({ method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster(ns)) });
    await send({ method: 'POST', path: inst, body: JSON.stringify(instance('target', ns)) });
  });
  after(async () => env?.stop());

  /** Sends `r`, expecting `code` within a second and an event loop never blocked for more than 500 ms meanwhile (or `bounds`). */
  async function answered(r: RawRequest, code: number, bounds = { ms: 1000, blockedMs: 500 }): Promise<RawResponse> {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    const res = await send(r);
    const took = performance.now() - started;
    delay.disable();
    expect(res.status, res.text.slice(0, 300)).to.equal(code);
    expect(took, `answered within ${bounds.ms} ms`).to.be.lessThan(bounds.ms);
    expect(delay.max / 1e6, 'event loop blocked (ms)').to.be.lessThan(bounds.blockedMs);
    return res;
  }

  /** As answered(), for a refusal: a Status of `code` whose message matches. */
  async function refused(r: RawRequest, code: number, message: RegExp): Promise<RawResponse> {
    const res = await answered(r, code);
    expect(res.json).to.include({ kind: 'Status', code });
    expect(res.json.message).to.match(message);
    return res;
  }

  it('stores "labels": null as no labels, so a label-selector watch survives it (it once threw in the watch cache, and the process exited)', async () => {
    const list = await send({ path: `${inst}?labelSelector=app%3Dx` });
    const watch = await openWatch(env.kubeconfig, `${inst}?watch=true&labelSelector=app%3Dx&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      const nulls = { ...instance('null-labels', ns), metadata: { name: 'null-labels', namespace: ns, labels: null, annotations: null } };
      const created = await send({ method: 'POST', path: inst, body: JSON.stringify(nulls) });
      expect(created.status, created.text).to.equal(201);
      expect(created.json.metadata).to.not.have.any.keys('labels', 'annotations');
      const patched = await send({ method: 'PATCH', path: `${inst}/null-labels`, body: JSON.stringify([{ op: 'add', path: '/metadata/labels', value: null }]), contentType: JSON_PATCH });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.json.metadata).to.not.have.property('labels');
      const labelled = await send({ method: 'PATCH', path: `${inst}/null-labels`, body: JSON.stringify({ metadata: { labels: { app: 'x' } } }), contentType: 'application/merge-patch+json' });
      expect(labelled.status, labelled.text).to.equal(200);
      await watch.until((evs) => evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'null-labels'));
      expect((await send({ path: `${inst}?labelSelector=app%3Dx` })).json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).to.deep.equal(['null-labels']);
    } finally {
      watch.close();
    }
  });

  it('refuses a YAML apply whose keys are nested mappings (once 14 s to minutes of one CPU)', async () => {
    for (const n of [300, 1000]) {
      const body = `apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata: {name: x}\n${'? '.repeat(n)}`;
      await refused({ method: 'PATCH', path: `${inst}/x?fieldManager=fuzz`, body, contentType: APPLY }, 400, /mapping keys must be strings|nested more than 100 levels deep/);
    }
  });

  it('refuses a YAML anchor used inside itself, as an apply and as a POST (once 500, and 240 MB)', async () => {
    const body = 'apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata: &m {name: x, labels: *m}\n';
    await refused({ method: 'PATCH', path: `${inst}/x?fieldManager=fuzz`, body, contentType: APPLY }, 400, /anchor "m" is used inside itself/);
    await refused({ method: 'POST', path: inst, body, contentType: 'application/yaml' }, 400, /anchor "m" is used inside itself/);
  });

  it('refuses a JSON patch that doubles the object with each copy (once 32 s, then 500)', async () => {
    const ops: unknown[] = [{ op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(64) } }];
    for (let i = 0; i < 23; i++) ops.push({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/c${i}` });
    await refused({ method: 'PATCH', path: `${inst}/target`, body: JSON.stringify(ops), contentType: JSON_PATCH }, 413, /copies more than \d+ bytes/);
  });

  it('refuses a JSON patch of more than 10,000 operations', async () => {
    const ops = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'Instance' }));
    await refused({ method: 'PATCH', path: `${inst}/target`, body: JSON.stringify(ops), contentType: JSON_PATCH }, 413, /maximum operations in a JSON patch is 10000/);
  });

  it('refuses bodies nested deeper than 100 levels, in JSON and in YAML', async () => {
    const deep = { ...instance('deep', ns), spec: { ...instance('deep', ns).spec, x: nested(150) } };
    await refused({ method: 'POST', path: inst, body: JSON.stringify(deep) }, 400, /nested more than 100 levels deep/);
    await refused({ method: 'POST', path: inst, body: `a: ${'['.repeat(5000)}${']'.repeat(5000)}`, contentType: 'application/yaml' }, 400, /nested more than 100 levels deep/);
  });

  it('never stores a poison object: deep managedFields are refused at create, and a patch cannot build one', async () => {
    const poison = instance('poison', ns);
    poison.metadata.managedFields = [{ manager: 'x', operation: 'Update', apiVersion: 'cairn.dev/v1alpha1', fieldsType: 'FieldsV1', fieldsV1: nested(3500) }];
    await refused({ method: 'POST', path: inst, body: JSON.stringify(poison) }, 400, /nested more than 100 levels deep/);
    // Each copy below nests the annotations one level deeper than the body itself does.
    const ops: unknown[] = [{ op: 'add', path: '/metadata/annotations', value: nested(90, 'v') }];
    const into = `/metadata/annotations${'/a'.repeat(90)}`;
    for (let i = 0; i < 3; i++) ops.push({ op: 'copy', from: '/metadata/annotations', path: `${into.slice(0, -2)}/b${i}` });
    const res = await refused({ method: 'PATCH', path: `${inst}/target`, body: JSON.stringify(ops), contentType: JSON_PATCH }, 422, /nested more than 100 levels deep/);
    expect(res.json.details.causes[0].field).to.match(/^metadata\.annotations\.a\.a/);
    const after = await send({ method: 'PATCH', path: `${inst}/target`, body: JSON.stringify({ metadata: { labels: { still: 'patchable' } } }), contentType: 'application/merge-patch+json' });
    expect(after.status, after.text).to.equal(200);
  });

  it('refuses a YAML body of many aliases at once (each alias once walked the whole body: seconds, minutes for 1.5 MiB)', async () => {
    const body = `apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata: {name: aliases}\nspec: {a: &x 1, b: [${'*x, '.repeat(10_000)}*x]}\n`;
    await refused({ method: 'POST', path: inst, body, contentType: 'application/yaml' }, 400, /more than 50 aliases/);
  });

  it('answers a JSON patch that moves a large value onto itself again and again at once (each move once copied it)', async () => {
    const big = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, 'v']));
    const ops: unknown[] = [{ op: 'add', path: '/metadata/annotations', value: big }];
    for (let i = 0; i < 1_000; i++) ops.push({ op: 'move', from: '/metadata/annotations', path: '/metadata/annotations' });
    ops.push({ op: 'remove', path: '/metadata/annotations' });
    await answered({ method: 'PATCH', path: `${inst}/target`, body: JSON.stringify(ops), contentType: JSON_PATCH }, 200);
  });

  it('answers a write whose managedFields name 10,000 fields beside 10,000 it sets at once (once every pair was compared)', async function () {
    // Its 175 ms come near the 500-ms bound when the suite's other processes take the CPU (561 ms seen
    // once); every pair compared again would fail each attempt.
    this.retries(2);
    const body = instance('many-fields', ns);
    body.metadata.labels = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`l${i}`, 'v']));
    const fields = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f:x${i}`, {}]));
    body.metadata.managedFields = [{ manager: 'other', operation: 'Update', apiVersion: 'cairn.dev/v1alpha1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': fields } }];
    await answered({ method: 'POST', path: `${inst}?dryRun=All&fieldManager=mine`, body: JSON.stringify(body) }, 201);
  });

  it('owns a keyed list of 5,000 items at once, on its create, every later write and an apply that drops it (each item was found by a scan: 5 s, then 15 s a write)', async function () {
    // 0.1 to 0.4 s each alone; up to 1.6 s seen in CI beside the other test processes. The scan took 5.4 s to create it, 15 s a write.
    const bounds = { ms: 3000, blockedMs: 2500 };
    this.retries(2);
    const env = Array.from({ length: 5_000 }, (_, i) => ({ name: `V${i}`, value: 'x' }));
    const body = { ...instance('long-env', ns), spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'], env } } };
    await send({ method: 'DELETE', path: `${inst}/long-env` });
    await answered({ method: 'POST', path: `${inst}?fieldManager=creator`, body: JSON.stringify(body) }, 201, bounds);
    await answered({ method: 'PATCH', path: `${inst}/long-env?fieldManager=labeller`, body: JSON.stringify({ metadata: { labels: { a: 'b' } } }), contentType: 'application/merge-patch+json' }, 200, bounds);
    await answered({ method: 'PATCH', path: `${inst}/long-env?fieldManager=applier&force=true`, body: JSON.stringify(body), contentType: APPLY }, 200, bounds);
    // An applier alone on its list, dropping it: every item is removed.
    const applied = { ...body, metadata: { name: 'long-env-applied', namespace: ns } };
    await send({ method: 'DELETE', path: `${inst}/long-env-applied` });
    await answered({ method: 'PATCH', path: `${inst}/long-env-applied?fieldManager=applier`, body: JSON.stringify(applied), contentType: APPLY }, 201, bounds);
    const dropped = { ...applied, spec: { ...applied.spec, process: { command: ['/bin/true'] } } };
    const res = await answered({ method: 'PATCH', path: `${inst}/long-env-applied?fieldManager=applier`, body: JSON.stringify(dropped), contentType: APPLY }, 200, bounds);
    expect(res.json.spec.process).to.not.have.property('env');
  });

  it("never reaches Object.prototype through managedFields or an applied __proto__ (an apply once deleted the process's hasOwnProperty)", async () => {
    await send({ method: 'POST', path: inst, body: JSON.stringify(instance('proto', ns)) });
    const planted = [{ manager: 'x', operation: 'Apply', apiVersion: 'cairn.dev/v1alpha1', fieldsType: 'FieldsV1', fieldsV1: { 'f:__proto__': { 'f:hasOwnProperty': {} } } }];
    const plant = await send({ method: 'PATCH', path: `${inst}/proto`, body: JSON.stringify({ metadata: { managedFields: planted } }), contentType: 'application/merge-patch+json' });
    expect(plant.status, plant.text).to.equal(200);
    const apply = (config: Record<string, unknown>) => send({ method: 'PATCH', path: `${inst}/proto?fieldManager=x`, body: JSON.stringify({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'proto' }, ...config }), contentType: APPLY });
    expect((await apply({})).status).to.equal(200);
    expect(typeof Object.prototype.hasOwnProperty).to.equal('function');
    expect((await apply({ ['__proto__']: { toString: 1 } })).status).to.be.below(500);
    expect((await apply({})).status).to.equal(200);
    expect(typeof Object.prototype.toString).to.equal('function');
    expect((await send({ path: `${inst}/proto` })).status).to.equal(200);
  });

  it('applies over a managedFields entry whose list-item key is not JSON (every later apply once answered 500)', async () => {
    await send({ method: 'POST', path: inst, body: JSON.stringify(instance('bad-key', ns)) });
    const planted = [{ manager: 'other', operation: 'Update', apiVersion: 'cairn.dev/v1alpha1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:finalizers': { 'k:bad': {} } } } }];
    const plant = await send({ method: 'PATCH', path: `${inst}/bad-key`, body: JSON.stringify({ metadata: { managedFields: planted } }), contentType: 'application/merge-patch+json' });
    expect(plant.status, plant.text).to.equal(200);
    const res = await send({ method: 'PATCH', path: `${inst}/bad-key?fieldManager=mine`, body: JSON.stringify({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'bad-key', finalizers: ['example.com/keep'] } }), contentType: APPLY });
    expect(res.status, res.text).to.be.oneOf([200, 409]);
  });
});
