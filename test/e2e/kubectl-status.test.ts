/**
 * Acceptance 1 of issue 2, third part: stock kubectl reacting to status the
 * test writes through `/status` (as the controller will) — `get -w` prints a
 * new row, `wait --for=condition=Ready` returns — and `describe` showing the
 * core v1 Events recorded for an object.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { rawRequest } from '../support/http.js';
import { eventually, sleep } from '../support/eventually.js';
import { useKubectlEnv } from '../support/kubectl-env.js';

const instance = (name: string) => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name, namespace: 'demo' },
  spec: { cpus: 1, memory: '32Mi', process: { command: ['/bin/sleep', '3600'] } },
});

describe('kubectl e2e: watch, wait and describe over status and events', function () {
  this.timeout(60_000);
  const env = useKubectlEnv('cairn-kubectl-status-', { applyDemoCluster: true });

  const create = (obj: { metadata: { name: string; namespace: string }; [field: string]: unknown }) => {
    const file = path.join(env.tmp, `${obj.metadata.name}.yaml`);
    fs.writeFileSync(file, YAML.stringify(obj));
    return env.kubectl.ok(['create', '-f', file]);
  };

  /** Merge-patches an Instance's status through the status subresource, as a controller would. */
  async function writeStatus(name: string, status: Record<string, unknown>): Promise<void> {
    const r = await rawRequest(env.kc, {
      method: 'PATCH',
      path: `/apis/cairn.dev/v1alpha1/namespaces/demo/instances/${name}/status`,
      contentType: 'application/merge-patch+json',
      body: JSON.stringify({ status }),
    });
    expect(r.status, r.text).to.equal(200);
  }

  /** Starts a long-running kubectl (a watch) whose output the test reads as it arrives. */
  function background(args: string[]) {
    const child = spawn('kubectl', ['--kubeconfig', env.server.kubeconfig, '--cache-dir', env.kubectl.cacheDir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<void>((r) => child.once('close', () => r()));
    return {
      stdout: () => stdout,
      stderr: () => stderr,
      running: () => child.exitCode === null && child.signalCode === null,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  }

  it('kubectl get instances -w prints a new row when the status changes', async () => {
    const name = 'watch-1';
    await create(instance(name));
    const watch = background(['get', 'instances', '-n', 'demo', '-w']);
    try {
      const rows = () => watch.stdout().split('\n').filter((l) => l.startsWith(`${name} `));
      await eventually(`the initial row of ${name}\n${watch.stdout()}${watch.stderr()}`, () => rows().length > 0 || !watch.running());
      expect(watch.running(), watch.stderr()).to.equal(true);
      expect(watch.stdout().split('\n')[0]).to.match(/^NAME\s+PHASE\s+NODE\s+DRIVER\s+ACCELERATOR\s+CPUS\s+MEMORY\s+READY\s+AGE$/);
      expect(rows()).to.have.length(1);
      expect(rows()[0]).not.to.contain('Starting');

      await writeStatus(name, { phase: 'Starting', nodeName: 'node-a' });
      await eventually('a new row with the new status', () => rows().length > 1);
      expect(rows()[1]).to.match(new RegExp(`^${name}\\s+Starting\\s+node-a\\s+process\\s+1\\s+32Mi\\s`));
      expect(watch.running(), 'the watch is still open').to.equal(true);
    } finally {
      await watch.stop();
    }
  });

  it('kubectl wait --for=condition=Ready returns once the condition is written through /status', async () => {
    const name = 'wait-1';
    await create(instance(name));
    let settled = false;
    const wait = env.kubectl
      .run(['wait', '--for=condition=Ready', `instance/${name}`, '-n', 'demo', '--timeout=60s'], { timeoutMs: 70_000 })
      .finally(() => (settled = true));
    await sleep(1000);
    expect(settled, 'kubectl wait returned before the condition was written').to.equal(false);
    const writtenAt = Date.now();
    await writeStatus(name, {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Started', message: 'ok', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
    });
    const r = await wait;
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain(`instance.cairn.dev/${name} condition met`);
    expect(Date.now() - writtenAt, 'wait noticed the condition promptly').to.be.below(10_000);
  });

  it('kubectl describe instance shows the Events recorded for it', async () => {
    const name = 'desc-1';
    await create(instance(name));
    const uid = await env.kubectl.ok(['get', 'instance', name, '-n', 'demo', '-o', 'jsonpath={.metadata.uid}']);
    expect(uid).to.match(/^[0-9a-f-]{36}$/);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.test-event`, namespace: 'demo' },
      involvedObject: { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name, namespace: 'demo', uid },
      reason: 'TestReason',
      message: 'written by the kubectl e2e test',
      type: 'Normal',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      source: { component: 'test' },
    });
    // An event for another object must not show up.
    await create(instance('desc-2'));
    const otherUid = await env.kubectl.ok(['get', 'instance', 'desc-2', '-n', 'demo', '-o', 'jsonpath={.metadata.uid}']);
    await create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'desc-2.test-event', namespace: 'demo' },
      involvedObject: { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name: 'desc-2', namespace: 'demo', uid: otherUid },
      reason: 'OtherReason',
      message: 'not for desc-1',
      type: 'Warning',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      source: { component: 'test' },
    });

    const out = await env.kubectl.ok(['describe', 'instance', name, '-n', 'demo']);
    expect(out).to.match(new RegExp(`^Name:\\s+${name}$`, 'm'));
    expect(out).to.match(/^Events:/m);
    expect(out).to.match(/^\s+Normal\s+TestReason\s+\S+\s+test\s+written by the kubectl e2e test$/m);
    expect(out).not.to.contain('OtherReason');
  });
});
