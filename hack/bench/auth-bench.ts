/**
 * The cost of authorization (issue 7), measured side by side in one run
 * against one `cairn apiserver` process over a throwaway etcd: the same
 * requests sent as the admin (system:masters: allowed at once), as a node
 * credential (the node authorizer looks up the node's WorkItems in the
 * watch cache), and as an operator user (RBAC over the cached bindings).
 * The requests are an agent's fencing-lease pattern: GET and PUT (renew) of
 * `instance-<i>` leases whose instances have WorkItems on node-a.
 *
 * Usage: `npm run bench:auth`. Prints ops/s and p50/p99 per identity and
 * the ratio to the admin's. Exit 0 (no target: figures only), 1 on failure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newToken } from '../../api/token-format.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../etcd.js';
import { spawnCairn, type CairnProcess } from '../cairn-process.js';
import { expectStatus, fmt, latencySummary, runBenchmark, runConcurrent, targetFromKubeconfig, type ApiTarget, type RunResult } from './lib.js';

const NS = 'bench';
const INSTANCES = 500;
const N = 5000;
const CONCURRENCY = 32;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;

let etcd: ThrowawayEtcd | undefined;
let server: CairnProcess | undefined;
let dir: string | undefined;

const workItem = (i: number) => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'WorkItem',
  metadata: { name: `inst-${i}-node-a` },
  spec: { nodeName: 'node-a', type: 'InstanceRuntime', owner: { kind: 'Instance', name: `inst-${i}` } },
});
const lease = (i: number) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `instance-inst-${i}` }, spec: { holderIdentity: 'node-a', leaseDurationSeconds: 30 } });

/** A second identity on the same server: the admin target with another token. */
async function identity(admin: ApiTarget, spec: Record<string, unknown>): Promise<ApiTarget> {
  const t = newToken();
  await expectStatus(admin, [201], 'POST', '/apis/auth.cairn.dev/v1alpha1/tokens', { metadata: { name: t.id }, spec: { ...spec, secretHash: t.secretHash } });
  return { ...admin, token: t.token };
}

async function setUp(admin: ApiTarget): Promise<Record<string, ApiTarget>> {
  await expectStatus(admin, [201], 'POST', '/apis/cairn.dev/v1alpha1/clusters', { metadata: { name: NS }, spec: {} });
  await runConcurrent(INSTANCES, CONCURRENCY, async (i) => {
    await expectStatus(admin, [201], 'POST', `/apis/cairn.dev/v1alpha1/namespaces/${NS}/workitems`, workItem(i));
    await expectStatus(admin, [201], 'POST', LEASES, lease(i));
  });
  await expectStatus(admin, [201], 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    metadata: { name: 'ops' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cairn:operator' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'olive' }],
  });
  return {
    admin,
    node: await identity(admin, { type: 'node', cluster: NS, nodeName: 'node-a' }),
    operator: await identity(admin, { type: 'user', user: 'olive' }),
  };
}

const getLease = (t: ApiTarget) => (i: number) => expectStatus(t, [200], 'GET', `${LEASES}/instance-inst-${i % INSTANCES}`).then(() => true);
const renewLease = (t: ApiTarget) => async (i: number) => {
  const name = `instance-inst-${i % INSTANCES}`;
  // A renewal as the agent does it: PUT without a version pin would need one; merge-patch the renew time instead.
  await expectStatus(t, [200], 'PATCH', `${LEASES}/${name}`, { spec: { renewTime: new Date().toISOString().replace('Z', '000Z') } }, { 'Content-Type': 'application/merge-patch+json' });
  return true;
};

function line(what: string, who: string, r: RunResult, base?: RunResult): string {
  const ratio = base ? `  ${fmt(r.perSecond / base.perSecond, 2)}× the admin's rate` : '';
  return `${what.padEnd(14)} ${who.padEnd(9)} ${fmt(r.perSecond).padStart(6)}/s  ${latencySummary(r)}${r.errors ? `  ${r.errors} errors: ${r.firstError}` : ''}${ratio}`;
}

async function main(): Promise<boolean> {
  etcd = await startThrowawayEtcd();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-auth-bench-'));
  server = spawnCairn(['apiserver', '--etcd-endpoints', etcd.endpoint, '--data-dir', dir, '--port', '0', '--log-level', 'warn']);
  await server.ready;
  const ids = await setUp(targetFromKubeconfig(path.join(dir, 'admin.kubeconfig'), CONCURRENCY));
  console.log(`${INSTANCES} leases with WorkItems on node-a; ${N} requests per row at concurrency ${CONCURRENCY}`);
  for (const [what, op] of [['GET lease', getLease], ['PATCH lease', renewLease]] as const) {
    await runConcurrent(500, CONCURRENCY, op(ids.admin!)); // warm-up
    const results: Record<string, RunResult> = {};
    // Interleaved rounds, so a drift of the machine's load hits every identity alike.
    for (let round = 0; round < 2; round++) {
      for (const who of ['admin', 'node', 'operator']) {
        const r = await runConcurrent(N / 2, CONCURRENCY, op(ids[who]!));
        results[who] = results[who] ? merge(results[who]!, r) : r;
      }
    }
    for (const who of ['admin', 'node', 'operator']) console.log(line(what, who, results[who]!, who === 'admin' ? undefined : results.admin));
  }
  return true;
}

function merge(a: RunResult, b: RunResult): RunResult {
  const latencies = new Float64Array(a.latencies.length + b.latencies.length);
  latencies.set(a.latencies);
  latencies.set(b.latencies, a.latencies.length);
  const seconds = a.seconds + b.seconds;
  return { count: a.count + b.count, errors: a.errors + b.errors, firstError: a.firstError ?? b.firstError, seconds, perSecond: (a.count + b.count) / seconds, latencies };
}

runBenchmark(main, async () => {
  await server?.stop();
  await etcd?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 300_000);
