/**
 * Debian's python3-kubernetes (the official Python client, written by
 * nobody on the project) against the apiserver: it lists custom objects and
 * watches them (it sends `watch=True`, which kube reads as true), seeing
 * the objects there and one created while it watches.
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

/** Debian's interpreter: the one python3-kubernetes is installed for (hack/install-python-kubernetes.sh). */
const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import json, sys
from kubernetes import client, config, watch
config.load_kube_config(sys.argv[1])
api = client.CustomObjectsApi()
args = ('cairn.dev', 'v1alpha1', sys.argv[2], 'instances')
names = sorted(o['metadata']['name'] for o in api.list_namespaced_custom_object(*args)['items'])
print(json.dumps({'list': names}), flush=True)
seen = 0
for ev in watch.Watch().stream(api.list_namespaced_custom_object, *args, timeout_seconds=20):
    print(json.dumps({'event': ev['type'] + ' ' + ev['object']['metadata']['name']}), flush=True)
    seen += 1
    if seen == 3:
        break
`;

describe('the Python Kubernetes client (python3-kubernetes) against the apiserver (issue 15)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const ns = 'py';

  before(async () => {
    env = await startTestEnv();
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster(ns)) });
    for (const n of ['a', 'b']) await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', ns), body: JSON.stringify(instance(n, ns)) });
  });
  after(async () => env?.stop());

  it('lists, then watches: the objects there, then one created while it watches', async () => {
    const child = spawn(PYTHON, ['-c', SCRIPT, env.server.kubeconfigPath, ns], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: Record<string, string>[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, string>)));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await eventually('the two ADDED events of the watch', () => lines.filter((l) => l.event).length >= 2, 20_000, 50).catch((err: Error) => {
        throw new Error(`${err.message}; python said: ${JSON.stringify(lines)} ${stderr}`);
      });
      await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', ns), body: JSON.stringify(instance('c', ns)) });
      expect(await exited, stderr).to.equal(0);
    } finally {
      child.kill();
    }
    expect(lines[0]).to.deep.equal({ list: ['a', 'b'] });
    expect(lines.slice(1).map((l) => l.event)).to.deep.equal(['ADDED a', 'ADDED b', 'ADDED c']);
  });
});
