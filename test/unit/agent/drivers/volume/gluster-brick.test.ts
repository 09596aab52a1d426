/** blamingFiles: which files of a getfattr dump another brick is owed — pure. */
import { expect } from 'chai';
import { blamingFiles } from '../../../../../agent/drivers/volume/gluster-brick.js';

describe('gluster brick: pending heals', () => {
  it('counts files blaming another brick, not files only dirty from a write in flight nor all-zero counts', () => {
    const dump = [
      '# file: /b/.glusterfs/00/00/00000000-0000-0000-0000-000000000001',
      'trusted.afr.v-client-2=0x000000000000000100000001',
      '',
      '# file: /b/.glusterfs/ab/cd/abcd',
      'trusted.afr.dirty=0x000000010000000000000000',
      '',
      '# file: /b/.glusterfs/ef/01/ef01',
      'trusted.afr.dirty=0x000000000000000000000000',
      'trusted.afr.v-client-1=0x000000000000000000000000',
      '',
      '# file: /b/.glusterfs/12/34/1234',
      'trusted.afr.dirty=0x000000000000000000000000',
      'trusted.afr.v-client-0=0x000000020000000000000000',
      '',
    ].join('\n');
    expect(blamingFiles(dump)).to.equal(2);
    expect(blamingFiles('')).to.equal(0);
  });
});
