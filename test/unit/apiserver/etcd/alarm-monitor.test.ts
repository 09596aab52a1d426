/** The apiserver's view of etcd's alarms: /readyz lines, the metric, and one log line per change. */
import { expect } from 'chai';
import type { Logger } from 'winston';
import { EtcdAlarmMonitor } from '../../../../apiserver/etcd/alarm-monitor.js';

interface LogLine {
  level: string;
  message: string;
}

function setup(answers: (string[] | Error)[]) {
  const logs: LogLine[] = [];
  const at = (level: string) => (message: string) => void logs.push({ level, message });
  const log = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } as unknown as Logger;
  const state = new Map<string, boolean>();
  let pending: ((v: string[]) => void) | null = null;
  const listAlarms = () => {
    const next = answers.shift();
    if (next instanceof Error) return Promise.reject(next);
    if (next) return Promise.resolve(next);
    return new Promise<string[]>((resolve) => (pending = resolve)); // answered by the test
  };
  const monitor = new EtcdAlarmMonitor({ listAlarms, recovery: 'cairn etcd defrag --etcd-endpoints http://127.0.0.1:2379', log, onState: (a, r) => state.set(a, r) });
  return { monitor, logs, state, answer: (v: string[]) => pending!(v) };
}

describe('etcd alarm monitor', () => {
  it('reports a raised alarm on /readyz and the metric, and logs each change once', async () => {
    const { monitor, logs, state } = setup([[], ['Nospace'], ['Nospace'], new Error('unavailable'), []]);
    expect(state.get('NOSPACE')).to.equal(false);
    await monitor.refresh();
    expect(monitor.warnings()).to.deep.equal([]);
    await monitor.refresh();
    await monitor.refresh();
    expect(monitor.warnings()).to.have.length(1);
    expect(monitor.warnings()[0]).to.match(/^etcd is out of space \(NOSPACE alarm\): .* To free space run: cairn etcd defrag --etcd-endpoints http:\/\/127\.0\.0\.1:2379 /);
    expect(state.get('NOSPACE')).to.equal(true);
    await monitor.refresh(); // etcd unreachable: what was known stands
    expect(state.get('NOSPACE')).to.equal(true);
    await monitor.refresh();
    expect(state.get('NOSPACE')).to.equal(false);
    expect(logs.filter((l) => l.level !== 'debug').map((l) => `${l.level}: ${l.message}`)).to.deep.equal(['error: etcd NOSPACE alarm raised: etcd refuses writes', 'info: etcd alarm cleared']);
  });

  it('trusts a refused write over a poll that was under way', async () => {
    const { monitor, state, answer } = setup([]);
    const poll = monitor.refresh();
    monitor.noteNoSpace();
    monitor.noteNoSpace();
    answer([]);
    await poll;
    expect(state.get('NOSPACE')).to.equal(true);
  });
});
