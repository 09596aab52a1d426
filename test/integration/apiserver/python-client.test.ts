/**
 * Debian's python3-kubernetes (the official Python client, written by
 * nobody on the project) against the apiserver: it lists custom objects and
 * watches them (it sends `watch=True`, which kube reads as true), seeing
 * the objects there and one created while it watches; a watch from a
 * list's resourceVersion gets what changed after it; and server-side apply
 * conflicts with another manager's field until `force_conflicts=True` takes it over.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

const APPLY_SCRIPT = `
import json, sys
from kubernetes import client, config, watch
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ConflictError
api_client = config.new_client_from_config(sys.argv[1])
api = client.CustomObjectsApi(api_client)
args = ('cairn.dev', 'v1alpha1', sys.argv[2], 'instances')
rv = api.list_namespaced_custom_object(*args)['metadata']['resourceVersion']
instances = DynamicClient(api_client).resources.get(api_version='cairn.dev/v1alpha1', kind='Instance')
def apply(manager, cpus, force=False):
    body = {'apiVersion': 'cairn.dev/v1alpha1', 'kind': 'Instance', 'metadata': {'name': 'a'}, 'spec': {'cpus': cpus}}
    # python-kubernetes 22's REST layer sends only str bodies under a YAML content type; JSON is YAML.
    return instances.server_side_apply(body=json.dumps(body), name='a', namespace=sys.argv[2], field_manager=manager, force_conflicts=force).to_dict()
apply('other', 2)
try:
    apply('py', 3)
    print(json.dumps({'conflict': None}), flush=True)
except ConflictError as e:
    print(json.dumps({'conflict': e.status, 'reason': json.loads(e.body)['reason']}), flush=True)
obj = apply('py', 3, force=True)
owners = {m['manager']: json.dumps(m.get('fieldsV1', {})) for m in obj['metadata']['managedFields']}
print(json.dumps({'cpus': obj['spec']['cpus'], 'pyOwnsCpus': 'f:cpus' in owners.get('py', ''), 'otherOwnsCpus': 'f:cpus' in owners.get('other', '')}), flush=True)
for ev in watch.Watch().stream(api.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=5):
    print(json.dumps({'event': ev['type'] + ' ' + ev['object']['metadata']['name'] + ' cpus=' + str(ev['object']['spec']['cpus'])}), flush=True)
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

  it('watches from a resourceVersion; server-side apply conflicts (409) until force_conflicts=True (DynamicClient) takes the field over', async () => {
    const r = await runPython(APPLY_SCRIPT, env.server.kubeconfigPath, ns);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).to.deep.equal({ conflict: 409, reason: 'Conflict' });
    expect(lines[1]).to.deep.equal({ cpus: 3, pyOwnsCpus: true, otherOwnsCpus: false });
    expect(lines.slice(2).map((l) => l.event)).to.deep.equal(['MODIFIED a cpus=2', 'MODIFIED a cpus=3']);
  });
});

/** Runs a Python script; its TMPDIR (where DynamicClient caches discovery) is a directory removed afterwards. */
function runPython(script: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-python-'));
  return new Promise((resolve) => {
    const child = spawn(PYTHON, ['-c', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => {
      fs.rmSync(tmp, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}
