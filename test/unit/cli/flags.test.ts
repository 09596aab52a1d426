import { Command, InvalidArgumentError, type Option } from 'commander';
import { expect } from 'chai';
import { parseDuration, parseList, parsePort } from '../../../cli/flags.js';
import { cairnProgram } from '../../../cli/program.js';

describe('parseDuration', () => {
  const ok: [value: string, ms: number][] = [
    ['0', 0],
    ['90', 90_000],
    ['90s', 90_000],
    ['250ms', 250],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    ['2h3m4s5ms', 7_384_005],
    ['1.5s', 1500],
    ['0.5h', 1_800_000],
    ['30m1h', 5_400_000],
  ];
  for (const [value, ms] of ok) {
    it(`${value} → ${ms} ms`, () => expect(parseDuration(value)).to.equal(ms));
  }

  for (const value of ['', 's', 'abc', '5x', '1d', '-5s', '1h 30m', ' 5s', '5s ', '5m garbage', '5S']) {
    it(`rejects ${JSON.stringify(value)} with an InvalidArgumentError`, () => {
      expect(() => parseDuration(value)).to.throw(InvalidArgumentError, /is not a duration; use forms like 30s, 5m, 1h30m/);
    });
  }
});

describe('parsePort', () => {
  for (const [value, port] of [['0', 0], ['1', 1], ['8443', 8443], ['65535', 65535]] as const) {
    it(`${value} → ${port}`, () => expect(parsePort(value)).to.equal(port));
  }

  for (const value of ['65536', '-1', '80.5', 'http', 'NaN', '1e10']) {
    it(`rejects ${JSON.stringify(value)} with an InvalidArgumentError`, () => {
      expect(() => parsePort(value)).to.throw(InvalidArgumentError, /is not a port \(0-65535; 0 picks a free port\)/);
    });
  }

  // Regression (was a bug): cli/flags.ts parsePort uses Number(value), which is 0 for "" and whitespace, so `--port=`
  // (e.g. from an unset shell variable, `--port=$PORT`) silently means "pick a free port" instead of
  // failing. Number() also accepts "0x1f90" (8080) and "8e3" (8000). Expected: InvalidArgumentError.
  it('rejects an empty, blank, hex or exponent value', () => {
    for (const value of ['', ' ', '0x1f90', '8e3']) expect(() => parsePort(value), JSON.stringify(value)).to.throw(InvalidArgumentError);
  });
});

describe('parseList', () => {
  const cases: [value: string, list: string[]][] = [
    ['a,b,c', ['a', 'b', 'c']],
    [' a , b ', ['a', 'b']],
    ['a,,b,', ['a', 'b']],
  ];
  for (const [value, list] of cases) {
    it(`${JSON.stringify(value)} → ${JSON.stringify(list)}`, () => expect(parseList(value)).to.deep.equal(list));
  }

  it('refuses a list that names nothing (an empty --etcd-endpoints crashed etcd status)', () => {
    for (const value of ['', ',', ' , ']) expect(() => parseList(value), JSON.stringify(value)).to.throw(InvalidArgumentError, 'names nothing; give one or more, comma-separated');
  });
});

describe('the cairn program', () => {
  it('hints at --help after a usage error in every command, subcommands included', () => {
    const missing: string[] = [];
    const walk = (c: Command, path: string) => {
      if (!(c as unknown as { _showHelpAfterError: unknown })._showHelpAfterError) missing.push(path);
      for (const sub of c.commands) walk(sub, `${path} ${sub.name()}`);
    };
    walk(cairnProgram(), 'cairn');
    expect(missing).to.deep.equal([]);
  });

  it('refuses 0 for the intervals a loop would spin on', () => {
    for (const [command, flag] of [['agent', '--heartbeat-interval'], ['agent', '--lease-duration'], ['controller', '--retry-period'], ['controller', '--renew-deadline'], ['controller', '--lease-duration']]) {
      const option = cairnProgram().commands.find((c) => c.name() === command)!.options.find((o) => o.long === flag)!;
      expect(() => option.parseArg!('0s', undefined), `${command} ${flag}`).to.throw(InvalidArgumentError, 'is no time at all');
      expect(option.parseArg!('3s', undefined)).to.equal(3000);
    }
  });

  /** The option `flag` of command `command` or of one of its subcommands (token create). */
  function findOption(command: string, flag: string): Option {
    const walk = (c: Command): Option | undefined => c.options.find((o) => o.long === flag) ?? c.commands.map(walk).find((o) => o !== undefined);
    return walk(cairnProgram().commands.find((c) => c.name() === command)!)!;
  }

  it('refuses a duration longer than a timer holds (a --timeout 720h once timed out at once)', () => {
    const option = cairnProgram().commands.find((c) => c.name() === 'wait')!.options.find((o) => o.long === '--timeout')!;
    expect(() => option.parseArg!('720h', undefined)).to.throw(InvalidArgumentError, 'is longer than 596h');
    expect(option.parseArg!('596h', undefined)).to.equal(596 * 3_600_000);
    // A lifetime written into an object is no timer: a year-long token stays possible (docs/security.md: --ttl 720h).
    for (const [command, flag] of [['token', '--ttl'], ['user', '--ttl'], ['server', '--node-credential-ttl'], ['server', '--event-ttl']]) {
      const lifetime = findOption(command, flag);
      expect(lifetime.parseArg!('8760h', undefined), `${command} ${flag}`).to.equal(8760 * 3_600_000);
    }
  });

  it('takes only the log levels the processes know (another dropped every line)', () => {
    for (const command of ['server', 'apiserver', 'controller', 'agent']) {
      const option = cairnProgram().commands.find((c) => c.name() === command)!.options.find((o) => o.long === '--log-level');
      expect(option?.argChoices, command).to.deep.equal(['error', 'warn', 'info', 'debug']);
    }
  });
});
