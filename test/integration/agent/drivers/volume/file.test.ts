/**
 * The file replica driver on the real filesystem: sizes and allocation,
 * growth, refused shrinking, free-space checks (a request larger than
 * statfs reports free), nothing half-created, and reclaim policies.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { formatQuantity } from '../../../../../api/quantity.js';
import { fileDriver } from '../../../../../agent/drivers/volume/file.js';
import { OperationRunner } from '../../../../../agent/operations/runner.js';
import { captureLog, directContext, replicaItem, tempDir } from '../../helpers.js';

const MiB = 2 ** 20;

describe('file driver (real files)', function () {
  this.timeout(20_000);
  let dataDir: string;
  let volumes: string;

  beforeEach(() => {
    dataDir = tempDir('file');
    volumes = path.join(dataDir, 'volumes', 'c1');
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const env = () => ({ dataDir, nodeName: 'n1', now: Date.now });
  const freeBytes = () => {
    const st = fs.statfsSync(dataDir);
    return st.bavail * st.bsize;
  };

  it('creates a preallocated 64Mi replica, then grows it to 128Mi', async () => {
    const item = replicaItem('pre', { size: '64Mi', allocation: 'preallocated' });
    expect(await fileDriver.observe(item, env())).to.deep.include({ converged: false, action: 'create' });
    const created = await fileDriver.ensure(item, directContext(dataDir));
    const file = path.join(volumes, 'pre-0.img');
    expect(created.volumeReplica).to.deep.include({ path: file, size: '64Mi', sizeBytes: 64 * MiB });
    expect(created.volumeReplica!.allocatedBytes).to.be.at.least(64 * MiB);
    expect(fs.statSync(file).size).to.equal(64 * MiB);

    item.spec.volumeReplica!.size = '128Mi';
    expect(await fileDriver.observe(item, env())).to.deep.include({ converged: false, action: 'resize' });
    const grown = await fileDriver.ensure(item, directContext(dataDir));
    expect(grown).to.deep.include({ converged: true });
    expect(fs.statSync(file).size).to.equal(128 * MiB);
    expect(fs.statSync(file).blocks * 512).to.be.at.least(128 * MiB);
  });

  it('creates a sparse replica that allocates almost nothing, and grows it', async () => {
    const item = replicaItem('sparse', { size: '64Mi' });
    const obs = await fileDriver.ensure(item, directContext(dataDir));
    expect(obs.volumeReplica).to.include({ sizeBytes: 64 * MiB });
    expect(obs.volumeReplica!.allocatedBytes).to.be.below(MiB);
    item.spec.volumeReplica!.size = '128Mi';
    expect((await fileDriver.ensure(item, directContext(dataDir))).volumeReplica).to.include({ sizeBytes: 128 * MiB });
  });

  it('refuses to shrink a replica with InvalidSpec and leaves it as it was', async () => {
    const item = replicaItem('shrink', { size: '2Mi' });
    await fileDriver.ensure(item, directContext(dataDir));
    item.spec.volumeReplica!.size = '1Mi';
    const err = await fileDriver.ensure(item, directContext(dataDir)).catch((e: { reason: string; hint: string }) => e);
    expect(err).to.include({ reason: 'InvalidSpec' });
    expect((err as { hint: string }).hint).to.match(/back to at least 2Mi/);
    expect(fs.statSync(path.join(volumes, 'shrink-0.img')).size).to.equal(2 * MiB);
  });

  it('fails a replica larger than the free space with NoSpace and a hint, through a real worker, leaving nothing behind', async () => {
    const runner = new OperationRunner({ dataDir, nodeName: 'n1', logger: captureLog() });
    const size = formatQuantity(Math.ceil((freeBytes() + 2 ** 30) / MiB) * MiB);
    const result = await runner.run({ verb: 'ensure', item: replicaItem('huge', { size, allocation: 'preallocated' }), action: 'create' });
    expect(result.error?.reason).to.equal('NoSpace');
    expect(result.error?.message).to.match(/needs .* MiB more but .* has only .* MiB free/);
    expect(result.error?.hint).to.match(/free space on the filesystem of .* on node n1, lower spec.size of Volume huge/);
    expect(fs.readdirSync(volumes)).to.deep.equal([]);
  });

  it('fails growth beyond the free space with NoSpace and keeps the old size', async () => {
    const item = replicaItem('grow', { size: '1Mi' });
    await fileDriver.ensure(item, directContext(dataDir));
    item.spec.volumeReplica!.size = formatQuantity(Math.ceil((freeBytes() + 2 ** 30) / MiB) * MiB);
    const err = await fileDriver.ensure(item, directContext(dataDir)).catch((e: { reason: string }) => e);
    expect(err).to.include({ reason: 'NoSpace' });
    expect(fs.statSync(path.join(volumes, 'grow-0.img')).size).to.equal(MiB);
  });

  it('refuses a malformed size with InvalidSpec', async () => {
    const err = await fileDriver.observe(replicaItem('bad', { size: '1GB' }), env()).catch((e: Error) => e);
    expect(err).to.have.property('reason', 'InvalidSpec');
    expect((err as Error).message).to.match(/size of volume bad: invalid quantity "1GB"/);
  });

  it('sweeps a temp file left by a killed worker', async () => {
    fs.mkdirSync(volumes, { recursive: true });
    fs.writeFileSync(path.join(volumes, 'swept-0.img.tmp-12345'), 'half');
    await fileDriver.ensure(replicaItem('swept', { size: '1Mi' }), directContext(dataDir));
    expect(fs.readdirSync(volumes)).to.deep.equal(['swept-0.img']);
  });

  it('deletes the replica on remove, keeps it under reclaimPolicy Retain, and accepts a missing one', async () => {
    const keep = replicaItem('keep', { size: '1Mi', reclaimPolicy: 'Retain' });
    const drop = replicaItem('drop', { size: '1Mi' });
    for (const item of [keep, drop]) await fileDriver.ensure(item, directContext(dataDir));
    for (const item of [keep, drop]) await fileDriver.remove(item, directContext(dataDir));
    expect(fs.readdirSync(volumes)).to.deep.equal(['keep-0.img']);
    await fileDriver.remove(drop, directContext(dataDir));
  });
});
