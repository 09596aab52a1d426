/** Pure parts of the drivers: safe names and paths, driver selection, and the worker protocol's parsing. */
import { expect } from 'chai';
import type { WorkItem } from '../../../api/workitem.js';
import { instanceDir, replicaPath, safeName } from '../../../agent/drivers/paths.js';
import { driverFor } from '../../../agent/drivers/registry.js';
import { processDriver, reportedExit, signalOf } from '../../../agent/drivers/process/driver.js';
import type { ProcessState } from '../../../agent/drivers/process/state.js';
import { instanceEnv, specHash } from '../../../agent/drivers/process/launch.js';
import { parseLogLine, parseResult } from '../../../agent/operations/protocol.js';

const item = (spec: Partial<WorkItem['spec']>): WorkItem => ({ metadata: { namespace: 'c1', name: 'w' }, spec: { nodeName: 'n1', type: 'InstanceRuntime', owner: { kind: 'Instance', name: 'i' }, ...spec } });

describe('driver helpers', () => {
  it('turns only DNS-style names into path components', () => {
    expect(safeName('f', 'web-1.a')).to.equal('web-1.a');
    for (const bad of ['', '..', 'a/b', 'A', '-a', 'a..b', undefined]) expect(() => safeName('f', bad), String(bad)).to.throw(/is not a valid object name/);
    expect(instanceDir('/d', 'c1', 'web')).to.equal('/d/instances/c1/web');
    expect(replicaPath('/d', 'c1', 'data', 2)).to.equal('/d/volumes/c1/data-2.img');
    expect(() => replicaPath('/d', 'c1', 'data', -1)).to.throw(/not a non-negative integer/);
  });

  it('picks the driver of a WorkItem, DriverUnavailable for an unknown one', () => {
    expect(driverFor(item({ instance: { driver: 'process', runState: 'Running', cpus: 1, memory: '1Mi' } })).name).to.equal('process');
    expect(driverFor(item({ type: 'VolumeReplica', volumeReplica: { volumeName: 'v', index: 0, size: '1Mi' } })).name).to.equal('file');
    expect(driverFor(item({ instance: { driver: 'qemu', runState: 'Running', cpus: 1, memory: '1Mi' } })).name).to.equal('qemu');
    expect(() => driverFor(item({ instance: { driver: 'lxc' as 'qemu', runState: 'Running', cpus: 1, memory: '1Mi' } }))).to.throw(/instance driver lxc is not available on node n1/).with.property('reason', 'DriverUnavailable');
  });

  it('builds the instance environment, spec values last', () => {
    const spec = { driver: 'process' as const, runState: 'Running' as const, cpus: 1, memory: '1Mi', process: { command: ['x'], env: [{ name: 'CAIRN_NODE', value: 'override' }, { name: 'EMPTY' }] } };
    const env = instanceEnv(spec, { instance: 'web', cluster: 'c1', node: 'n1' }, { 'my-data': '/v/d.img' });
    expect(env).to.deep.include({ CAIRN_INSTANCE: 'web', CAIRN_CLUSTER: 'c1', CAIRN_NODE: 'override', CAIRN_VOLUME_MY_DATA: '/v/d.img', EMPTY: '' });
    expect(specHash(spec, {})).to.equal(specHash({ ...spec, runState: 'Stopped', restartToken: 'x' }, {}));
    expect(specHash(spec, {})).to.not.equal(specHash({ ...spec, cpus: 2 }, {}));
  });

  it('refuses malformed process specs with InvalidSpec', async () => {
    const env = { dataDir: '/nonexistent', nodeName: 'n1', now: Date.now };
    const base = { driver: 'process' as const, runState: 'Running' as const, cpus: 1, memory: '1Mi' };
    const cases: Array<[WorkItem, RegExp]> = [
      [item({ instance: { ...base, process: { command: [] } } }), /has no command/],
      [item({ instance: { ...base, process: { command: ['x'] }, volumes: [{ name: 'd', volumeName: 'v' }] } }), /has no replica on node .* and no gluster mount/],
      [item({ owner: { kind: 'Instance', name: '../etc' }, instance: { ...base, process: { command: ['x'] } } }), /spec.owner.name/],
      [item({ type: 'VolumeReplica', instance: { ...base, process: { command: ['x'] } } }), /is not a process instance/],
    ];
    for (const [bad, message] of cases) {
      const err = await processDriver.observe(bad, env).catch((e: Error) => e);
      expect(err, String(message)).to.have.property('reason', 'InvalidSpec');
      expect((err as Error).message).to.match(message);
    }
  });

  it('reports the exit of the run that ended, never the run before it once the current one is gone', () => {
    const state = (over: Partial<ProcessState> = {}): ProcessState => ({
      version: 1, pid: 42, startTicks: 7, bootId: 'b', startedAt: 0, restarts: 1, backoffCount: 0, specHash: 'h', stopped: false, limitsEnforced: false, limitsMessage: '',
      previousExit: { code: 0, at: 5 }, ...over,
    });
    expect(reportedExit(state({ exit: { code: 3, at: 9 } }), false, 7)).to.deep.equal({ code: 3, at: 9 });
    expect(reportedExit(state(), false, 0)).to.deep.equal({ code: 0, at: 0 });
    expect(reportedExit(state(), false, 143)).to.deep.equal({ code: 143, signal: 'SIGTERM', at: 0 });
    expect(reportedExit(state(), true)).to.deep.equal({ code: 0, at: 5 });
    expect(reportedExit(state(), false), 'ended without an exit file: unknown, not the previous run’s 0').to.equal(undefined);
    expect(reportedExit(undefined, false)).to.equal(undefined);
  });

  it('names the signal of an exit status above 128', () => {
    expect([signalOf(143), signalOf(137), signalOf(1), signalOf(undefined)]).to.deep.equal(['SIGTERM', 'SIGKILL', undefined, undefined]);
  });

  it('parses worker log lines and results, rejecting anything else', () => {
    expect(parseLogLine('{"level":"warn","message":"m","meta":{"a":1}}')).to.deep.equal({ level: 'warn', message: 'm', meta: { a: 1 } });
    for (const bad of ['plain text', '{"level":"debug","message":"m"}', '{broken']) expect(parseLogLine(bad), bad).to.equal(undefined);
    expect(parseResult('noise\n{"ok":true}\n')).to.deep.equal({ ok: true });
    expect(parseResult('{"ok":false,"error":{"reason":"NoSpace","message":"m"}}')).to.deep.include({ ok: false });
    for (const bad of ['', '{"ok":false}', 'not json']) expect(parseResult(bad), bad).to.equal(undefined);
  });
});
