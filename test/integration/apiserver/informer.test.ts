/**
 * Acceptance 3 of issue 2: a @kubernetes/client-node informer sees add,
 * update and delete; when its resourceVersion has been compacted away while
 * it was disconnected, it gets 410, relists, and ends on the true final state.
 */
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { URL } from 'node:url';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest } from '../../support/http.js';
import { kubeconfigFor, startTestEnv, type TestEnv } from '../../support/in-process.js';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { Etcd3 } from 'etcd3';

type Obj = k8s.KubernetesObject & { spec?: { cpus?: number } };

describe('client-node informer against the apiserver (real etcd)', function () {
  this.timeout(120_000);
  let env: TestEnv;

  before(async () => {
    env = await startTestEnv();
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('inf')) });
  });
  after(async () => env?.stop());

  it('sees add, update and delete, and relists after its version is compacted away', async () => {
    const api = env.kubeconfig.makeApiClient(k8s.CustomObjectsApi);
    const path = cairnPath('instances', 'inf');
    let lists = 0;
    const list = () => (lists++, api.listNamespacedCustomObject({ group: 'cairn.dev', version: 'v1alpha1', namespace: 'inf', plural: 'instances' }) as Promise<k8s.KubernetesListObject<Obj>>);
    const informer = k8s.makeInformer<Obj>(env.kubeconfig, path, list);
    const seen: string[] = [];
    let errors = 0;
    let done = false;
    informer.on('add', (o) => seen.push(`add ${o.metadata!.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata!.name} ${o.spec?.cpus}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata!.name}`));
    // The documented client-node pattern: an informer stops on error and is restarted by its owner.
    informer.on('error', () => {
      errors++;
      setTimeout(() => done || void informer.start(), 200);
    });
    await informer.start();

    const post = (name: string) => rawRequest(env.kubeconfig, { method: 'POST', path, body: JSON.stringify(instance(name, 'inf')) });
    const patch = (name: string, cpus: number, kc = env.kubeconfig) =>
      rawRequest(kc, { method: 'PATCH', path: `${path}/${name}`, contentType: 'application/merge-patch+json', body: JSON.stringify({ spec: { cpus } }) });
    await post('a');
    await eventually('add a', () => seen.includes('add a'));
    await patch('a', 3);
    await eventually('update a', () => seen.includes('update a 3'));
    await rawRequest(env.kubeconfig, { method: 'DELETE', path: `${path}/a` });
    await eventually('delete a', () => seen.includes('delete a'));

    // Take the informer's server away, change things through a second apiserver, compact past it all.
    await post('b');
    await eventually('add b', () => seen.includes('add b'));
    const port = new URL(env.server.url).port;
    await env.server.close();
    const other = await env.addServer();
    const otherKc = kubeconfigFor(other);
    await patch('b', 7, otherKc);
    await rawRequest(otherKc, { method: 'POST', path, body: JSON.stringify(instance('c', 'inf')) });
    await rawRequest(otherKc, { method: 'DELETE', path: `${path}/b` });
    const etcd = new EtcdStore(new Etcd3({ hosts: env.etcd.endpoint }));
    await etcd.compact(await etcd.currentRevision());
    etcd.client.close();
    env.server = await env.addServer({ port: Number(port), kubeconfigPath: env.server.kubeconfigPath });

    await eventually('final state after relist', () => {
      const names = informer.list('inf').map((o) => o.metadata!.name).sort();
      return names.join(',') === 'c';
    });
    expect(seen).to.include('delete b');
    expect(seen).to.include('add c');
    expect(errors, 'the informer saw its server go away').to.be.greaterThan(0);
    expect(lists, 'a relist after 410 Expired').to.be.greaterThan(1);
    done = true;
    await informer.stop();
  });
});
