/**
 * A gluster brick's filesystem image on the real filesystem, loop-mounted (root): a preallocated
 * volume's image has every block reserved on the node, when made and when grown; a sparse one takes
 * them on first write.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBrickFilesystem, removeBrickFilesystem } from '../../../../../agent/drivers/volume/brick-filesystem.js';
import { directContext, tempDir } from '../../helpers.js';

const MiB = 2 ** 20;
const allocatedBytes = (file: string) => fs.statSync(file).blocks * 512;

describe('gluster brick filesystem images (real loop mounts)', function () {
  this.timeout(30_000);
  let dir: string;
  let image: string;
  let mountPoint: string;
  beforeEach(() => {
    dir = tempDir('brick-fs');
    image = path.join(dir, 'brick.img');
    mountPoint = path.join(dir, 'brick');
  });
  afterEach(async () => {
    await removeBrickFilesystem(image, mountPoint, directContext(dir));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const ensure = (bytes: number, allocation: 'sparse' | 'preallocated') => ensureBrickFilesystem(image, mountPoint, bytes, allocation, directContext(dir), async () => undefined);

  it('reserves every block of a preallocated image, made and grown', async () => {
    await ensure(32 * MiB, 'preallocated');
    expect(allocatedBytes(image)).to.be.at.least(fs.statSync(image).size);
    await ensure(64 * MiB, 'preallocated');
    expect(fs.statSync(image).size).to.be.above(64 * MiB);
    expect(allocatedBytes(image)).to.be.at.least(fs.statSync(image).size);
  });

  it('leaves a sparse image sparse, and allocates it whole once the volume says preallocated', async () => {
    await ensure(32 * MiB, 'sparse');
    expect(allocatedBytes(image)).to.be.below(fs.statSync(image).size / 2);
    await ensure(32 * MiB, 'preallocated');
    expect(allocatedBytes(image)).to.be.at.least(fs.statSync(image).size);
  });
});
