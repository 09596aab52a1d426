/** imageBytes: the brick image holds the Volume's size plus ext4's overhead — pure. */
import { expect } from 'chai';
import fc from 'fast-check';
import { imageBytes } from '../../../../../agent/drivers/volume/brick-filesystem.js';

const MiB = 2 ** 20;

describe('gluster brick filesystem', () => {
  it('sizes the image above the size by a few percent plus a fixed 12+ MiB, in whole MiB', () => {
    // 64 MiB: journal 4, inode tables 1, 2% 1.28, fixed 8 → 79 MiB.
    expect(imageBytes(64 * MiB) / MiB).to.equal(79);
    fc.assert(fc.property(fc.integer({ min: 16, max: 64 * 1024 }), (mib) => {
      const image = imageBytes(mib * MiB);
      expect(image % MiB).to.equal(0);
      expect(image).to.be.greaterThan(mib * MiB + 12 * MiB);
      expect(image).to.be.at.most(mib * MiB * 1.05 + 137 * MiB);
    }));
  });
});
