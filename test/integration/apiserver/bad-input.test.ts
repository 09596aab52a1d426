/**
 * Acceptance 7 of issue 2: bad input never yields a 5xx or a crash. Named
 * cases check the exact code; a fast-check property sends well over 1,000
 * generated bodies and checks every answer is a success or a well-formed
 * 4xx Status.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { rawRequest, type RawRequest, type RawResponse } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

function expectStatus(r: RawResponse, code: number, what: string): void {
  expect(r.status, `${what}: ${r.text.slice(0, 300)}`).to.equal(code);
  expect(r.json, what).to.include({ kind: 'Status', status: 'Failure', code });
  expect(r.json.message, what).to.be.a('string').and.not.empty;
}

function expectWellFormed(r: RawResponse, what: string): void {
  expect(r.status, `${what} → ${r.status} ${r.text.slice(0, 300)}`).to.be.lessThan(500);
  if (r.status >= 400) {
    expect(r.json, what).to.include({ kind: 'Status', code: r.status });
    expect(r.json.message, what).to.be.a('string');
  }
}

describe('apiserver bad input', function () {
  this.timeout(300_000);
  let env: TestEnv;
  const send = (r: RawRequest) => rawRequest(env.kubeconfig, r);
  const inst = cairnPath('instances', 'bad');

  before(async () => {
    env = await startTestEnv();
    await send({ method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('bad')) });
    await send({ method: 'POST', path: inst, body: JSON.stringify(instance('target', 'bad')) });
  });
  after(async () => env?.stop());

  const cases: [string, RawRequest, number][] = [
    ['malformed JSON', { method: 'POST', path: cairnPath('instances', 'bad'), body: '{"metadata": {' }, 400],
    ['malformed YAML', { method: 'POST', path: cairnPath('instances', 'bad'), body: 'a: [b\n  c: :', contentType: 'application/yaml' }, 400],
    ['a JSON array body', { method: 'POST', path: cairnPath('instances', 'bad'), body: '[1,2]' }, 400],
    ['an empty body', { method: 'POST', path: cairnPath('instances', 'bad'), body: '' }, 400],
    ['wrong apiVersion', { method: 'POST', path: cairnPath('instances', 'bad'), body: JSON.stringify({ ...instance('v', 'bad'), apiVersion: 'cairn.dev/v9' }) }, 400],
    ['wrong kind', { method: 'POST', path: cairnPath('instances', 'bad'), body: JSON.stringify({ ...instance('k', 'bad'), kind: 'Volume' }) }, 400],
    ['metadata not an object', { method: 'POST', path: cairnPath('instances', 'bad'), body: JSON.stringify({ ...instance('m', 'bad'), metadata: 'x' }) }, 400],
    ['namespace mismatch', { method: 'POST', path: cairnPath('instances', 'bad'), body: JSON.stringify(instance('n', 'other')) }, 400],
    ['missing namespace', { method: 'POST', path: cairnPath('instances', 'nowhere'), body: JSON.stringify(instance('n', 'nowhere')) }, 404],
    ['body over 1.5 MiB', { method: 'POST', path: cairnPath('instances', 'bad'), body: JSON.stringify({ ...instance('big', 'bad'), pad: 'x'.repeat(1.6 * 1024 * 1024) }) }, 413],
    ['bad label selector', { path: `${inst}?labelSelector=${encodeURIComponent('a in (b')}` }, 400],
    ['unsupported field selector', { path: `${inst}?fieldSelector=spec.cpus%3D1` }, 400],
    ['malformed field selector', { path: `${inst}?fieldSelector=${encodeURIComponent('a\\q=1')}` }, 400],
    ['bad continue token', { path: `${inst}?limit=1&continue=not-a-token` }, 400],
    ['continue token with a foreign shape', { path: `${inst}?limit=1&continue=${Buffer.from('{"v":"x"}').toString('base64')}` }, 400],
    ['bad limit', { path: `${inst}?limit=-3` }, 400],
    ['bad resourceVersion on watch', { path: `${inst}?watch=true&resourceVersion=abc` }, 400],
    ['json patch that is not an array', { method: 'PATCH', path: `${inst}/target`, contentType: 'application/json-patch+json', body: '{"op":"add"}' }, 400],
    ['json patch with a bad op', { method: 'PATCH', path: `${inst}/target`, contentType: 'application/json-patch+json', body: '[{"op":"frobnicate","path":"/spec"}]' }, 422],
    ['json patch on a missing path', { method: 'PATCH', path: `${inst}/target`, contentType: 'application/json-patch+json', body: '[{"op":"remove","path":"/spec/nope/deeper"}]' }, 422],
    ['merge patch that makes it invalid', { method: 'PATCH', path: `${inst}/target`, contentType: 'application/merge-patch+json', body: '{"spec":{"cpus":"many"}}' }, 422],
    ['merge patch changing the kind', { method: 'PATCH', path: `${inst}/target`, contentType: 'application/merge-patch+json', body: '{"kind":"Volume"}' }, 400],
    ['unsupported patch type', { method: 'PATCH', path: `${inst}/target`, contentType: 'text/plain', body: 'hello' }, 415],
    ['apply without fieldManager', { method: 'PATCH', path: `${inst}/target`, contentType: 'application/apply-patch+yaml', body: 'spec: {}' }, 400],
    ['PUT without resourceVersion', { method: 'PUT', path: `${inst}/target`, body: JSON.stringify(instance('target', 'bad')) }, 422],
    ['PUT with a different name', { method: 'PUT', path: `${inst}/target`, body: JSON.stringify(instance('other', 'bad')) }, 400],
    ['bad dryRun value', { method: 'POST', path: `${inst}?dryRun=Some`, body: JSON.stringify(instance('d', 'bad')) }, 400],
    ['bad fieldValidation value', { method: 'POST', path: `${inst}?fieldValidation=Loud`, body: JSON.stringify(instance('f', 'bad')) }, 400],
    ['unknown resource', { path: '/apis/cairn.dev/v1alpha1/gadgets' }, 404],
    ['unknown subresource', { path: `${inst}/target/scale` }, 404],
    ['DELETE with malformed options', { method: 'DELETE', path: `${inst}/target`, body: '{"preconditions": 5}' }, 400],
    // An object whose own toString is not a function, where a string belongs: turned into text, it threw (500).
    ...(() => {
      const odd = { toString: 0 };
      const configMaps = '/api/v1/namespaces/bad/configmaps';
      const odds: [string, RawRequest][] = [
        ['name', { method: 'POST', path: configMaps, body: JSON.stringify({ metadata: { name: odd } }) }],
        ['generateName', { method: 'POST', path: inst, body: JSON.stringify({ ...instance('x', 'bad'), metadata: { generateName: odd } }) }],
        ['apiVersion', { method: 'POST', path: configMaps, body: JSON.stringify({ apiVersion: odd, metadata: { name: 'x' } }) }],
        ['kind', { method: 'POST', path: configMaps, body: JSON.stringify({ kind: odd, metadata: { name: 'x' } }) }],
        ['resourceVersion in a PUT', { method: 'PUT', path: `${inst}/target`, body: JSON.stringify({ ...instance('target', 'bad'), metadata: { name: 'target', resourceVersion: odd } }) }],
        ['name from a merge patch', { method: 'PATCH', path: `${inst}/target`, contentType: 'application/merge-patch+json', body: JSON.stringify({ metadata: { name: odd } }) }],
        ['name in an apply', { method: 'PATCH', path: `${inst}/target?fieldManager=m`, contentType: 'application/apply-patch+yaml', body: JSON.stringify({ ...instance('target', 'bad'), metadata: { name: odd } }) }],
        ['a delete precondition', { method: 'DELETE', path: `${inst}/target`, body: JSON.stringify({ preconditions: { uid: odd } }) }],
        ['a Cluster name', { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify({ metadata: { name: odd }, spec: {} }) }],
        ['a v1 Namespace apiVersion', { method: 'POST', path: '/api/v1/namespaces', body: JSON.stringify({ apiVersion: odd, metadata: { name: 'x' } }) }],
      ];
      return odds.map(([field, req]): [string, RawRequest, number] => [`${field} an object with a toString that is no function`, req, 400]);
    })(),
  ];
  for (const [what, req, code] of cases) {
    it(`${what} → ${code}`, async () => expectStatus(await send(req), code, what));
  }

  it('takes null identity fields for unset, as kube decodes them', async () => {
    const r = await send({ method: 'POST', path: '/api/v1/namespaces/bad/configmaps', body: JSON.stringify({ metadata: { name: 'nulls', resourceVersion: null, uid: null, namespace: null } }) });
    expect(r.status, r.text).to.equal(201);
  });

  it('survives 1,200 generated bodies with only successes and well-formed 4xx answers', async () => {
    const targets: { method: string; path: string; contentType: string }[] = [
      { method: 'POST', path: inst, contentType: 'application/json' },
      { method: 'POST', path: inst, contentType: 'application/yaml' },
      { method: 'PUT', path: `${inst}/target`, contentType: 'application/json' },
      { method: 'PATCH', path: `${inst}/target`, contentType: 'application/merge-patch+json' },
      { method: 'PATCH', path: `${inst}/target`, contentType: 'application/strategic-merge-patch+json' },
      { method: 'PATCH', path: `${inst}/target`, contentType: 'application/json-patch+json' },
      { method: 'PATCH', path: `${inst}/target?fieldManager=fuzz`, contentType: 'application/apply-patch+yaml' },
      { method: 'PATCH', path: `${inst}/target/status`, contentType: 'application/merge-patch+json' },
      { method: 'POST', path: cairnPath('clusters'), contentType: 'application/json' },
    ];
    const nearlyValid = fc.record({
      apiVersion: fc.constantFrom('cairn.dev/v1alpha1', 'v1', 'cairn.dev/v2', undefined),
      kind: fc.constantFrom('Instance', 'Cluster', 'Volume', 42, undefined),
      metadata: fc.oneof(fc.record({ name: fc.oneof(fc.string(), fc.constant('target')), labels: fc.dictionary(fc.string(), fc.string()) }, { requiredKeys: [] }), fc.jsonValue()),
      spec: fc.oneof(fc.jsonValue(), fc.record({ cpus: fc.oneof(fc.integer(), fc.string()), memory: fc.string(), process: fc.jsonValue() }, { requiredKeys: [] })),
      status: fc.jsonValue(),
    }, { requiredKeys: [] });
    const body = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
      fc.string({ unit: 'binary' }),
      nearlyValid.map((v) => JSON.stringify(v)),
      fc.array(fc.record({ op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'x'), path: fc.string(), value: fc.jsonValue(), from: fc.string() }, { requiredKeys: ['op'] })).map((v) => JSON.stringify(v)),
    );
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), body, async (t, b) => {
        sent++;
        expectWellFormed(await send({ method: t.method, path: t.path, contentType: t.contentType, body: b }), `${t.method} ${t.path} ${t.contentType} ${b.slice(0, 200)}`);
      }),
      { numRuns: 1200 },
    );
    expect(sent).to.be.at.least(1200);
    expect((await send({ path: '/healthz', authorization: null })).status).to.equal(200);
  });
});
