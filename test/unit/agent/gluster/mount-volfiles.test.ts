import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkItem } from '../../../../api/workitem.js';
import { mountRunDir } from '../../../../agent/drivers/volume/gluster-mount.js';
import { mountVolfileLookup } from '../../../../agent/gluster/mount-volfiles.js';

function instanceWorkItem(name: string, resourceVersion: string, volfile: string, deleting = false): WorkItem {
  return {
    metadata: { name, namespace: 'c', resourceVersion, ...(deleting ? { deletionTimestamp: '2026-11-28T00:00:00Z' } : {}) },
    spec: { nodeName: 'n1', type: 'InstanceRuntime', owner: { kind: 'Instance', name }, instance: { volumes: [{ volumeName: 'v', gluster: { volume: 'c-v', volfile } }] } },
  } as unknown as WorkItem;
}

describe('agent: the volfile a gluster mount is served', () => {
  let dir: string;
  let clientVol: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-volfiles-'));
    const rd = mountRunDir(dir, 'c', 'v');
    fs.mkdirSync(rd, { recursive: true });
    clientVol = path.join(rd, 'client.vol');
    fs.writeFileSync(clientVol, 'graph of 2 bricks (made with)');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('serves the newest WorkItem graph, and keeps it as the mount\'s own', () => {
    const lookup = mountVolfileLookup(() => [instanceWorkItem('a', '7', 'graph of 2 bricks'), instanceWorkItem('b', '9', 'graph of 3 bricks')], dir);
    expect(lookup('c/v')).to.equal('graph of 3 bricks');
    expect(fs.readFileSync(clientVol, 'utf8')).to.equal('graph of 3 bricks');
  });

  it('keeps the last graph served once the users\' WorkItems are being deleted (their instances still stopping), not the one it was made with', () => {
    let items = [instanceWorkItem('a', '9', 'graph of 3 bricks')];
    const lookup = mountVolfileLookup(() => items, dir);
    expect(lookup('c/v')).to.equal('graph of 3 bricks');
    items = [instanceWorkItem('a', '10', 'graph of 3 bricks', true)];
    expect(lookup('c/v')).to.equal('graph of 3 bricks');
    items = [];
    expect(lookup('c/v')).to.equal('graph of 3 bricks');
  });

  it('does not make a mount that is gone reappear, and names no mount for a key that is no volume', () => {
    fs.rmSync(path.dirname(clientVol), { recursive: true });
    const lookup = mountVolfileLookup(() => [instanceWorkItem('a', '9', 'graph of 3 bricks')], dir);
    expect(lookup('c/v')).to.equal('graph of 3 bricks');
    expect(fs.existsSync(path.dirname(clientVol))).to.equal(false);
    expect(mountVolfileLookup(() => [], dir)('c/v')).to.equal(undefined);
    expect(mountVolfileLookup(() => [], dir)('c/../../etc')).to.equal(undefined);
  });
});
