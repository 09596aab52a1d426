/** The qemu command line built from a WorkItem, and the choice of accelerator: pure. */
import { expect } from 'chai';
import type { WorkItemInstanceSpec } from '../../../../../api/workitem.js';
import { qemuArgs, type VmCommandInput } from '../../../../../agent/drivers/qemu/command.js';
import { chooseAccelerator } from '../../../../../agent/drivers/qemu/runtime.js';

const paths = { consoleLog: '/d/console.log', consoleSocket: '/d/console.sock', qmpSocket: '/d/qmp.sock', controlSocket: '/d/qmp-control.sock', pidFile: '/d/qemu.pid' };
const spec = (qemu: WorkItemInstanceSpec['qemu']): WorkItemInstanceSpec => ({ driver: 'qemu', runState: 'Running', cpus: 2, memory: '128Mi', qemu });
const input = (over: Partial<VmCommandInput> = {}): VmCommandInput => ({
  instance: 'c1/vm', spec: spec({ kernel: '/k', initrd: '/i', cmdline: 'console=ttyS0' }), memoryBytes: 128 * 1024 * 1024, accelerator: 'tcg', disks: [], paths, ...over,
});
const after = (args: string[], flag: string) => args.filter((_, i) => args[i - 1] === flag);

describe('qemu command line', () => {
  it('boots a kernel with machine, accelerator, cpus, memory, serial log, two QMP sockets and a pid file', () => {
    const args = qemuArgs(input());
    expect(after(args, '-machine')).to.deep.equal(['q35,accel=tcg']);
    expect(after(args, '-smp')).to.deep.equal(['2']);
    expect(after(args, '-m')).to.deep.equal(['128']);
    expect(after(args, '-kernel')).to.deep.equal(['/k']);
    expect(after(args, '-initrd')).to.deep.equal(['/i']);
    expect(after(args, '-append')).to.deep.equal(['console=ttyS0']);
    expect(after(args, '-chardev')).to.deep.equal(['socket,id=console,path=/d/console.sock,server=on,wait=off,logfile=/d/console.log,logappend=on']);
    expect(after(args, '-qmp')).to.deep.equal(['unix:/d/qmp.sock,server=on,wait=off', 'unix:/d/qmp-control.sock,server=on,wait=off']);
    expect(after(args, '-pidfile')).to.deep.equal(['/d/qemu.pid']);
    expect(args).to.include.members(['-nodefaults', '-no-user-config']);
    expect(args).not.to.include('-incoming');
  });

  it('rounds memory up to whole MiB and takes machine and cpu model from the spec', () => {
    const args = qemuArgs(input({ memoryBytes: 100 * 1024 * 1024 + 1, spec: spec({ kernel: '/k', machine: 'pc', cpuModel: 'qemu64' }), accelerator: 'kvm' }));
    expect(after(args, '-m')).to.deep.equal(['101']);
    expect(after(args, '-machine')).to.deep.equal(['pc,accel=kvm']);
    expect(after(args, '-cpu')).to.deep.equal(['qemu64']);
  });

  it('attaches each volume replica as a raw virtio-blk disk named by position, read-only when asked', () => {
    const args = qemuArgs(input({ disks: [{ name: 'data', path: '/v/a.img', readOnly: false }, { name: 'ro', path: '/v/b.img', readOnly: true }] }));
    const blockdevs = after(args, '-blockdev').map((j) => JSON.parse(j) as Record<string, unknown>);
    expect(blockdevs).to.deep.equal([
      { driver: 'raw', 'node-name': 'vol0', 'read-only': false, file: { driver: 'file', filename: '/v/a.img' } },
      { driver: 'raw', 'node-name': 'vol1', 'read-only': true, file: { driver: 'file', filename: '/v/b.img' } },
    ]);
    expect(after(args, '-device')).to.deep.equal(['virtio-blk-pci,drive=vol0,id=disk-0', 'virtio-blk-pci,drive=vol1,id=disk-1']);
  });

  it('opens a disk on a gluster volume with cache=none (O_DIRECT), so a migrated guest reads no stale page cache', () => {
    const args = qemuArgs(input({ disks: [{ name: 'data', path: '/mnt/v/disk.img', readOnly: false, shared: true }] }));
    const cache = { direct: true, 'no-flush': false };
    expect(JSON.parse(after(args, '-blockdev')[0]!)).to.deep.equal({ driver: 'raw', 'node-name': 'vol0', 'read-only': false, cache, file: { driver: 'file', filename: '/mnt/v/disk.img', cache } });
  });

  it('boots from a disk image instead of a kernel', () => {
    const args = qemuArgs(input({ spec: spec({ bootDisk: { path: '/img.qcow2', format: 'qcow2', readOnly: true } }) }));
    expect(JSON.parse(after(args, '-blockdev')[0]!)).to.deep.include({ driver: 'qcow2', 'node-name': 'boot', 'read-only': true });
    expect(after(args, '-device')[0]).to.equal('virtio-blk-pci,drive=boot,id=boot-disk,bootindex=0');
    expect(args).not.to.include('-kernel');
  });

  it('refuses a VM with neither kernel nor boot disk, naming the fields', () => {
    expect(() => qemuArgs(input({ spec: spec({}) }))).to.throw(/neither spec.qemu.kernel nor spec.qemu.bootDisk/).with.property('reason', 'InvalidSpec');
  });

  it('adds user networking, extra arguments last, and -incoming defer -S for a migration target', () => {
    const args = qemuArgs(input({ spec: spec({ kernel: '/k', network: 'user', extraArgs: ['-rtc', 'base=utc'] }), incoming: true }));
    expect(after(args, '-netdev')).to.deep.equal(['user,id=net0']);
    expect(args.slice(-5)).to.deep.equal(['-incoming', 'defer', '-S', '-rtc', 'base=utc']);
  });
});

describe('accelerator choice', () => {
  it('auto uses what the probe found (tcg when nothing was probed); tcg is always possible; kvm only where KVM runs guests', () => {
    expect(chooseAccelerator('auto', 'kvm', 'n1')).to.equal('kvm');
    expect(chooseAccelerator(undefined, 'tcg', 'n1')).to.equal('tcg');
    expect(chooseAccelerator('auto', undefined, 'n1')).to.equal('tcg');
    expect(chooseAccelerator('tcg', 'kvm', 'n1')).to.equal('tcg');
    expect(chooseAccelerator('kvm', 'kvm', 'n1')).to.equal('kvm');
    expect(() => chooseAccelerator('kvm', 'tcg', 'n1')).to.throw(/KVM does not run guests on node n1/).with.property('reason', 'DriverUnavailable');
  });
});
