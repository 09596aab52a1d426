/** cgroup v2 discovery and limit files, against fake delegated trees and this host's real hierarchy. */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cgroup2MountPoint, cpuMax, prepareCgroup } from '../../../../../agent/drivers/process/cgroup.js';

describe('cgroup v2 limits', () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cg-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('finds the cgroup2 mount in /proc/self/mounts text', () => {
    const hybrid = 'cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n';
    expect(cgroup2MountPoint(hybrid)).to.equal('/sys/fs/cgroup/unified');
    expect(cgroup2MountPoint('cgroup2 /sys/fs/my\\040cg cgroup2 rw 0 0')).to.equal('/sys/fs/my cg');
    expect(cgroup2MountPoint('proc /proc proc rw 0 0\n')).to.equal(undefined);
  });

  it('writes cpu.max with a 100 ms period and a floor', () => {
    expect([cpuMax(1), cpuMax(0.5), cpuMax(2.25), cpuMax(0)]).to.deep.equal(['100000 100000', '50000 100000', '225000 100000', '1000 100000']);
  });

  it('creates the instance cgroup with limits when the controllers are there', async () => {
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpu io memory\n');
    fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), 'cpu memory\n');
    fs.mkdirSync(path.join(root, 'cairn'));
    fs.writeFileSync(path.join(root, 'cairn', 'cgroup.subtree_control'), '');
    const placement = await prepareCgroup(root, 'c1_web', { cpus: 2, memoryBytes: 1024 });
    expect(placement).to.include({ enforced: true, dir: path.join(root, 'cairn', 'c1_web') });
    expect(fs.readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8')).to.equal('cpu memory\n');
    expect(fs.readFileSync(path.join(root, 'cairn', 'cgroup.subtree_control'), 'utf8')).to.equal('+cpu +memory');
    expect(fs.readFileSync(path.join(placement.dir!, 'memory.max'), 'utf8')).to.equal('1024');
  });

  it('says why limits are not enforced', async () => {
    expect((await prepareCgroup(path.join(root, 'missing'), 'x', { cpus: 1, memoryBytes: 1 })).message).to.match(/^cannot read the cgroup v2 hierarchy/);
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpu pids\n');
    const noMemory = await prepareCgroup(root, 'x', { cpus: 1, memoryBytes: 1 });
    expect(noMemory).to.deep.equal({ enforced: false, message: `the cgroup v2 hierarchy at ${root} does not offer the memory controller(s) (on a hybrid host they belong to cgroup v1); cpu and memory limits are not enforced` });
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpu memory\n');
    const unwritable = await prepareCgroup(root, 'x', { cpus: 1, memoryBytes: 1 });
    expect(unwritable.message).to.match(/^cannot set up cgroup .*cgroup.subtree_control/);
  });

  it('agrees with this host: enforced exactly when its cgroup2 mount offers cpu and memory', async () => {
    const mount = cgroup2MountPoint(fs.readFileSync('/proc/self/mounts', 'utf8'));
    const controllers = mount ? fs.readFileSync(path.join(mount, 'cgroup.controllers'), 'utf8').split(/\s+/) : [];
    const offered = controllers.includes('cpu') && controllers.includes('memory');
    const placement = await prepareCgroup(undefined, `cairn-unit-test-${process.pid}`, { cpus: 1, memoryBytes: 2 ** 30 });
    if (placement.dir) fs.rmdirSync(placement.dir);
    if (!offered) expect(placement.enforced).to.equal(false);
    expect(placement.message).to.be.a('string').and.not.empty;
  });
});
