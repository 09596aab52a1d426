/**
 * The CLI's two API clients against one real apiserver: Node's https
 * (HttpsClient, what Cairn's kubeconfigs get) must answer and fail exactly
 * as client-node (ClientNodeClient, what any other kubeconfig gets) —
 * bodies, API errors, refused connections, watches with and without a
 * Table Accept header.
 */
import { expect } from 'chai';
import type { ApiClient } from '../../../cli/client/api-client.js';
import { ClientNodeClient } from '../../../cli/client/client-node-client.js';
import { formatError } from '../../../cli/client/errors.js';
import { HttpsClient } from '../../../cli/client/https-client.js';
import { readKubeconfig } from '../../../cli/client/kubeconfig-file.js';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

const NS = 'api-client';
const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' };

describe('the CLI API clients, https and client-node alike (real apiserver)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let clients: { https: ApiClient; node: ApiClient };

  before(async () => {
    env = await startTestEnv();
    const opts = { kubeconfig: env.server.kubeconfigPath };
    const settings = readKubeconfig(opts);
    expect(settings, 'the apiserver writes a kubeconfig the https client reads').to.not.equal(null);
    clients = { https: new HttpsClient(settings!), node: ClientNodeClient.load(opts) };
    await clients.node.request('POST', cairnPath('clusters'), { body: cluster(NS) });
    await clients.node.request('POST', cairnPath('instances', NS), { body: instance('a', NS) });
  });
  after(async () => {
    clients?.https.close();
    clients?.node.close();
    await env?.stop();
  });

  /** What each client gives for the same call: its value, or the failure as the CLI prints it. */
  async function both(call: (c: ApiClient) => Promise<unknown>): Promise<[unknown, unknown]> {
    const outcome = (c: ApiClient) => call(c).then((v) => ({ value: v }), (err: unknown) => ({ error: formatError(err, c.cluster?.server), code: (err as { code?: unknown }).code }));
    return [await outcome(clients.https), await outcome(clients.node)];
  }

  it('name the same cluster', () => {
    expect(clients.https.cluster).to.deep.equal(clients.node.cluster);
  });

  it('read the same objects, lists and tables', async () => {
    for (const call of [
      (c: ApiClient) => c.request('GET', cairnPath('instances', NS, 'a')),
      (c: ApiClient) => c.request('GET', cairnPath('instances', NS), { query: { labelSelector: undefined, limit: 500 } }),
      (c: ApiClient) => c.request('GET', cairnPath('instances', NS), { headers: TABLE }),
      (c: ApiClient) => c.request('GET', '/apis'),
    ]) {
      const [https, node] = await both(call);
      expect(https).to.deep.equal(node);
    }
  });

  it('fail alike: not found, invalid, conflict, unknown path', async () => {
    const a = (await clients.node.request<{ metadata: { resourceVersion: string } }>('GET', cairnPath('instances', NS, 'a'))).metadata.resourceVersion;
    for (const call of [
      (c: ApiClient) => c.request('GET', cairnPath('instances', NS, 'nope')),
      (c: ApiClient) => c.request('POST', cairnPath('instances', NS), { body: { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'bad' }, spec: { cpus: 'many' } } }),
      (c: ApiClient) => c.request('PATCH', cairnPath('instances', NS, 'a'), { body: { metadata: { resourceVersion: String(Number(a) - 1) } }, headers: { 'Content-Type': 'application/merge-patch+json' } }),
      (c: ApiClient) => c.request('GET', '/apis/nothing.example/v1/things'),
    ]) {
      const [https, node] = await both(call);
      expect(https).to.deep.equal(node);
      expect(https).to.have.property('error');
    }
  });

  it('write alike: merge patch, server-side apply dry run, delete', async () => {
    const merge = { headers: { 'Content-Type': 'application/merge-patch+json' }, query: { fieldManager: 'cairn' } };
    const [https, node] = await both(async (c) => {
      const patched = await c.request<{ spec: { cpus: number } }>('PATCH', cairnPath('instances', NS, 'a'), { ...merge, body: { spec: { cpus: 2 } } });
      const applied = await c.request<{ metadata: { name: string } }>('PATCH', cairnPath('instances', NS, 'b'), {
        body: JSON.stringify(instance('b', NS)),
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
        query: { fieldManager: 'cairn', dryRun: 'All' },
      });
      return [patched.spec.cpus, applied.metadata.name];
    });
    expect(https).to.deep.equal(node).and.to.deep.equal({ value: [2, 'b'] });
  });

  it('a refused connection is named the same way', async () => {
    const opts = { server: 'https://127.0.0.1:1', token: 'x', insecureSkipTlsVerify: true };
    const refused = { https: new HttpsClient(readKubeconfig(opts)!), node: ClientNodeClient.load(opts) };
    const call = (c: ApiClient) => c.request('GET', '/apis').then(() => 'answered', (err: unknown) => formatError(err, c.cluster?.server));
    expect(await call(refused.https)).to.equal(await call(refused.node)).and.to.match(/^The connection to the server https:\/\/127\.0\.0\.1:1 was refused/);
    const watchError = async (c: ApiClient) => (await c.watch('/apis/cairn.dev/v1alpha1/instances', {}, () => undefined)).done.then(() => 'ended', (err: { code?: string }) => err.code);
    expect(await watchError(refused.https)).to.equal(await watchError(refused.node)).and.to.equal('ECONNREFUSED');
    refused.https.close();
    refused.node.close();
  });

  it('watch alike: the same events, Table rows with a Table Accept, a refused watch as a status error', async () => {
    const path = cairnPath('instances', NS);
    const { metadata } = await clients.node.request<{ metadata: { resourceVersion: string } }>('GET', path);
    const watched = async (c: ApiClient, headers?: Record<string, string>) => {
      const events: string[] = [];
      const h = await c.watch(path, { resourceVersion: metadata.resourceVersion, fieldSelector: 'metadata.name=a' }, (type, obj) => {
        const o = obj as { kind: string; metadata?: { name?: string }; rows?: { cells: unknown[] }[] };
        events.push(`${type} ${o.kind} ${o.metadata?.name ?? o.rows?.[0]?.cells[0]}`);
        if (events.length === 1) h.stop();
      }, headers);
      await h.done;
      return events;
    };
    const runs = Promise.all([watched(clients.https), watched(clients.node), watched(clients.https, TABLE), watched(clients.node, TABLE)]);
    setTimeout(() => void clients.node.request('PATCH', cairnPath('instances', NS, 'a'), { body: { spec: { cpus: 3 } }, headers: { 'Content-Type': 'application/merge-patch+json' } }), 300);
    const [https, node, httpsTable, nodeTable] = await runs;
    expect(https).to.deep.equal(node).and.to.deep.equal(['MODIFIED Instance a']);
    expect(httpsTable).to.deep.equal(nodeTable).and.to.deep.equal(['MODIFIED Table a']);
    const refused = async (c: ApiClient) => (await c.watch('/apis/cairn.dev/v1alpha1/nothings', {}, () => undefined)).done.then(() => 'ended', (err: { statusCode?: number; message?: string }) => `${err.statusCode} ${err.message}`);
    expect(await refused(clients.https)).to.equal(await refused(clients.node)).and.to.equal('404 Not Found');
  });

  it('watch alike: a handler that throws ends the watch with its error, and hears nothing more', async () => {
    const throwing = async (c: ApiClient) => {
      let calls = 0;
      const h = await c.watch(cairnPath('instances', NS), { resourceVersion: '0' }, () => {
        calls++;
        throw new Error('handler refused the event');
      });
      const outcome = await h.done.then(() => 'ended', (err: Error) => err.message);
      return `${outcome} after ${calls} call(s)`;
    };
    expect(await throwing(clients.https)).to.equal(await throwing(clients.node)).and.to.equal('handler refused the event after 1 call(s)');
  });
});
