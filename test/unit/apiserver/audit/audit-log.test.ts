import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import winston from 'winston';
import { auditLine, AuditLogFile, isAudited } from '../../../../apiserver/audit/audit-log.js';
import type { AuditEntry } from '../../../../apiserver/audit/audit-sink.js';

const quiet = winston.createLogger({ silent: true });

function entry(i: number, extra: Partial<AuditEntry> = {}): AuditEntry {
  return {
    time: new Date(0).toISOString(), user: 'admin', groups: ['system:masters', 'system:authenticated'], verb: 'update', path: `/apis/cairn.dev/v1alpha1/namespaces/demo/instances/i-${i}`,
    apiGroup: 'cairn.dev', resource: 'instances', namespace: 'demo', name: `i-${i}`, code: 200, ...extra,
  };
}

const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe('audit log', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-audit-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes an entry as one JSON object in a stable key order, leaving out absent fields', () => {
    const line = auditLine(entry(1, { subresource: 'status', namespace: undefined }));
    expect(line).to.not.include('\n');
    expect(Object.keys(JSON.parse(line))).to.deep.equal(['time', 'user', 'groups', 'verb', 'apiGroup', 'resource', 'subresource', 'name', 'code', 'path']);
  });

  it('audits every mutating request but the review APIs, which store nothing', () => {
    expect(isAudited(entry(1))).to.equal(true);
    expect(isAudited({ ...entry(1), apiGroup: '', resource: 'events' })).to.equal(true);
    expect(isAudited({ ...entry(1), apiGroup: undefined, resource: undefined, path: '/credentials' })).to.equal(true);
    expect(isAudited({ ...entry(1), verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' })).to.equal(false);
    expect(isAudited({ ...entry(1), verb: 'create', apiGroup: 'authentication.k8s.io', resource: 'tokenreviews' })).to.equal(false);
  });

  it('rotates at the size limit, keeps at most maxFiles files of whole lines, and loses none of the newest', async () => {
    const file = path.join(dir, 'logs', 'audit.log');
    const maxSizeBytes = 4096;
    const log = new AuditLogFile({ path: file, maxSizeBytes, maxFiles: 3 }, quiet);
    const n = 2000;
    for (let i = 0; i < n; i++) log.record(entry(i));
    await log.close();

    expect(fs.readdirSync(path.dirname(file)).sort()).to.deep.equal(['audit.log', 'audit.log.1', 'audit.log.2']);
    expect(mode(path.dirname(file))).to.equal(0o700);
    const lineLength = auditLine(entry(n)).length + 1;
    const seen: number[] = [];
    for (const name of ['audit.log.2', 'audit.log.1', 'audit.log']) {
      const p = path.join(path.dirname(file), name);
      expect(mode(p), name).to.equal(0o600);
      const text = fs.readFileSync(p, 'utf8');
      expect(text.endsWith('\n'), name).to.equal(true);
      expect(text.length, name).to.be.at.most(maxSizeBytes + lineLength);
      for (const line of text.slice(0, -1).split('\n')) seen.push(Number((JSON.parse(line) as AuditEntry).name!.slice(2)));
    }
    expect(seen.at(-1)).to.equal(n - 1);
    expect(seen, 'the kept lines are the newest, in order, none missing').to.deep.equal(seen.map((_, i) => seen[0]! + i));
    expect(seen.length).to.be.greaterThan((2 * maxSizeBytes) / lineLength);
  });

  it('appends to an existing file and makes it 0600', async () => {
    const file = path.join(dir, 'audit.log');
    fs.writeFileSync(file, `${auditLine(entry(0))}\n`, { mode: 0o644 });
    const log = new AuditLogFile({ path: file, maxSizeBytes: 2 ** 20, maxFiles: 2 }, quiet);
    log.record(entry(1));
    log.record({ ...entry(2), apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' });
    await log.close();
    expect(mode(file)).to.equal(0o600);
    expect(fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as AuditEntry).name)).to.deep.equal(['i-0', 'i-1']);
  });

  it('refuses fewer than two files, since rotation always keeps the rotated one', () => {
    expect(() => new AuditLogFile({ path: path.join(dir, 'a.log'), maxSizeBytes: 100, maxFiles: 1 }, quiet)).to.throw(/at least 2/);
  });
});
