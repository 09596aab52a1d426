/**
 * Issue 7 part 5 (acceptance 5): a real `cairn server` writes exactly one
 * audit line per mutating request — successful or not — with who, verb,
 * resource, namespace, name and code, and none for reads; also when its
 * apiserver runs as two worker processes that hand their entries to the
 * primary, which rotates the file.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { AuditEntry } from '../../../apiserver/audit/audit-sink.js';
import { newToken } from '../../../api/token-format.js';
import { rawRequest, type RawRequest } from '../../support/http.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';

const NS = 'audit';
const CLUSTERS = '/apis/cairn.dev/v1alpha1/clusters';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const MERGE = 'application/merge-patch+json';

/** What a test expects of one line: `verb group/resource[/sub] namespace/name code`. */
const describeEntry = (e: Partial<AuditEntry>) =>
  `${e.verb} ${e.apiGroup}/${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.namespace ?? ''}/${e.name ?? ''} ${e.code}`;

/** Sends the requests and returns the lines they must leave; reads are sent in between and must leave none. */
async function exercise(kc: k8s.KubeConfig, bulk: number): Promise<string[]> {
  const expected: string[] = [];
  const send = async (r: RawRequest, status: number, line?: string) => {
    const res = await rawRequest(kc, r);
    expect(res.status, `${r.method ?? 'GET'} ${r.path}: ${res.text}`).to.equal(status);
    if (line) expected.push(line);
    return res;
  };
  const json = (o: unknown) => JSON.stringify(o);
  const lease = (name: string) => json({ metadata: { name }, spec: { holderIdentity: 'a' } });
  const reads = async () => {
    await send({ path: CLUSTERS }, 200);
    await send({ path: `${CLUSTERS}/${NS}` }, 200);
    await send({ path: LEASES }, 200);
    await send({ path: `${LEASES}/missing` }, 404);
    await send({ path: `${LEASES}?watch=true&timeoutSeconds=1` }, 200);
    for (const p of ['/api', '/apis', '/version', '/openapi/v3']) await send({ path: p }, 200);
  };

  await send({ method: 'POST', path: CLUSTERS, body: json({ metadata: { name: NS } }) }, 201, `create cairn.dev/clusters /${NS} 201`);
  await reads();
  await send({ method: 'POST', path: LEASES, body: lease('l1') }, 201, `create coordination.k8s.io/leases ${NS}/l1 201`);
  await send({ method: 'POST', path: LEASES, body: lease('l1') }, 409, `create coordination.k8s.io/leases ${NS}/l1 409`);
  await send({ method: 'POST', path: LEASES, body: lease('Not_A_Name') }, 422, `create coordination.k8s.io/leases ${NS}/Not_A_Name 422`);
  const generated = await send({ method: 'POST', path: LEASES, body: json({ metadata: { generateName: 'gen-' } }) }, 201);
  expected.push(`create coordination.k8s.io/leases ${NS}/${generated.json.metadata.name} 201`);
  await reads();
  const l1 = (await send({ path: `${LEASES}/l1` }, 200)).json;
  const stale = { ...l1, metadata: { ...l1.metadata, resourceVersion: '1' } };
  await send({ method: 'PUT', path: `${LEASES}/l1`, body: json(stale) }, 409, `update coordination.k8s.io/leases ${NS}/l1 409`);
  await send({ method: 'PUT', path: `${LEASES}/l1`, body: json(l1) }, 200, `update coordination.k8s.io/leases ${NS}/l1 200`);
  await send({ method: 'PATCH', path: `${LEASES}/l1`, contentType: MERGE, body: json({ spec: { holderIdentity: 'b' } }) }, 200, `patch coordination.k8s.io/leases ${NS}/l1 200`);
  await send({ method: 'PATCH', path: `${LEASES}/missing`, contentType: MERGE, body: '{}' }, 404, `patch coordination.k8s.io/leases ${NS}/missing 404`);
  await send({ method: 'PATCH', path: `${CLUSTERS}/${NS}/status`, contentType: MERGE, body: json({ status: { observedGeneration: 1 } }) }, 200, `patch cairn.dev/clusters/status /${NS} 200`);
  await send({ method: 'DELETE', path: `${LEASES}/missing` }, 404, `delete coordination.k8s.io/leases ${NS}/missing 404`);
  await send({ method: 'DELETE', path: `${LEASES}/l1` }, 200, `delete coordination.k8s.io/leases ${NS}/l1 200`);
  await send({ method: 'DELETE', path: `${LEASES}?labelSelector=app%3Dnone` }, 200, `deletecollection coordination.k8s.io/leases ${NS}/ 200`);
  // A user without any role: the refused write is logged (403), the refused read is not.
  const mallory = newToken();
  const tokenBody = json({ metadata: { name: mallory.id }, spec: { type: 'user', user: 'mallory', secretHash: mallory.secretHash } });
  await send({ method: 'POST', path: '/apis/auth.cairn.dev/v1alpha1/tokens', body: tokenBody }, 201, `create auth.cairn.dev/tokens /${mallory.id} 201`);
  await send({ method: 'POST', path: LEASES, body: lease('sneaky'), authorization: `Bearer ${mallory.token}` }, 403, `create coordination.k8s.io/leases ${NS}/ 403`); // refused before its body is read, as kube's audit does
  await send({ path: LEASES, authorization: `Bearer ${mallory.token}` }, 403);
  // A refused impersonation is logged under the caller's own name, a read's as a write's.
  await send({ path: LEASES, authorization: `Bearer ${mallory.token}`, headers: { 'Impersonate-User': 'admin', 'Impersonate-Group': 'system:masters' } }, 403, 'impersonate /users /admin 403');
  // Impersonated (kubectl --as): logged as the user it acted as, and who impersonated.
  await send({ method: 'POST', path: LEASES, body: lease('as-alice'), headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'system:masters' } }, 201, `create coordination.k8s.io/leases ${NS}/as-alice 201`);
  // A review is a POST that stores nothing: a read (404 until SelfSubjectAccessReview is served; unaudited either way).
  const review = await rawRequest(kc, { method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body: json({ spec: { resourceAttributes: { verb: 'get', resource: 'leases' } } }) });
  expect(review.status).to.be.oneOf([201, 404]);
  await reads();

  // Concurrent writes, spread over the workers when there are several.
  const names = Array.from({ length: bulk }, (_, i) => `bulk-${i}`);
  await Promise.all(names.map((n) => send({ method: 'POST', path: LEASES, body: lease(n) }, 201, `create coordination.k8s.io/leases ${NS}/${n} 201`)));
  await Promise.all(names.map((n) => send({ method: 'PATCH', path: `${LEASES}/${n}`, contentType: MERGE, body: json({ spec: { holderIdentity: 'c' } }) }, 200, `patch coordination.k8s.io/leases ${NS}/${n} 200`)));
  await Promise.all(names.map(() => reads()));
  return expected;
}

/** Every line of the log and its rotated files, oldest first; each must be a whole JSON object. */
function readAuditLog(file: string): AuditEntry[] {
  const dir = path.dirname(file);
  const rotated = fs.readdirSync(dir).filter((f) => f.startsWith(`${path.basename(file)}.`)).sort((a, b) => Number(b.split('.').pop()) - Number(a.split('.').pop()));
  const entries: AuditEntry[] = [];
  for (const name of [...rotated, path.basename(file)]) {
    const text = fs.readFileSync(path.join(dir, name), 'utf8');
    expect(text.endsWith('\n'), `${name} ends with a whole line`).to.equal(true);
    for (const line of text.slice(0, -1).split('\n')) entries.push(JSON.parse(line) as AuditEntry);
  }
  return entries;
}

function checkAuditLog(file: string, expected: string[], rotatedFiles: number): void {
  const entries = readAuditLog(file);
  expect(entries.map(describeEntry).sort()).to.deep.equal([...expected].sort());
  for (const e of entries) {
    if (e.code === 403) {
      expect(e.user).to.equal('mallory');
      continue;
    }
    if (e.name === 'as-alice') {
      expect(e).to.include({ user: 'alice', impersonatedBy: 'admin' });
      continue;
    }
    expect(e.user).to.equal('admin');
    expect(e.groups).to.include('system:masters');
    expect(Date.parse(e.time), e.time).to.be.closeTo(Date.now(), 10 * 60_000);
    expect(e.path).to.match(/^\/apis\//);
  }
  expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
  expect(fs.statSync(path.dirname(file)).mode & 0o777).to.equal(0o700);
  expect(fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith('audit.log.')).length).to.be.at.least(rotatedFiles);
}

function auditScenario(title: string, opts: { workers: number; bulk: number; auditDir?: string; args: (dir: string) => string[]; rotatedFiles: number }) {
  describe(title, function () {
    this.timeout(180_000);
    let server: ServerProcess | undefined;
    let scratch: string;

    before(async () => {
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-audit-'));
      server = await startServerProcess({ extraArgs: ['--workers', String(opts.workers), ...opts.args(scratch)] });
    });
    after(async () => {
      await server?.cleanup();
      fs.rmSync(scratch, { recursive: true, force: true });
    });

    it('logs exactly one line per mutating request, failed ones included, and none for reads', async () => {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(server!.kubeconfig);
      const expected = await exercise(kc, opts.bulk);
      const file = opts.auditDir ? path.join(scratch, opts.auditDir, 'audit.log') : path.join(server!.dataDir, 'audit.log');
      await server!.stop(); // flushes: the file is complete once the server has exited
      checkAuditLog(file, expected, opts.rotatedFiles);
    });
  });
}

describe('audit log of cairn server', () => {
  auditScenario('one process, the default <data-dir>/audit.log', { workers: 1, bulk: 10, args: () => [], rotatedFiles: 0 });
  auditScenario('--workers 2, an explicit --audit-log-path, rotated by the primary', {
    workers: 2, bulk: 60, auditDir: 'logs/audit', rotatedFiles: 2,
    args: (dir) => ['--audit-log-path', path.join(dir, 'logs', 'audit', 'audit.log'), '--audit-log-max-size', '8Ki', '--audit-log-max-files', '20'],
  });
});
