import { expect } from 'chai';
import { restartTarget } from '../../../cli/run/node-ops.js';
import { CliError } from '../../../cli/client/errors.js';
import { catalog } from './apply-fixtures.js';

describe('restartTarget (the instance cairn restart names)', () => {
  it('takes `instance NAME` and `instance/NAME`', () => {
    for (const args of [['instance', 'web'], ['instance/web'], ['instances', 'web'], ['instances.cairn.dev/web']]) {
      const t = restartTarget(catalog, args);
      expect([t.r.kind, t.name], args.join(' ')).to.deep.equal(['Instance', 'web']);
    }
  });

  it('refuses other kinds, no name, and more than one', () => {
    expect(() => restartTarget(catalog, ['volume/data'])).to.throw(CliError, 'cannot restart volumes: only instances restart');
    expect(() => restartTarget(catalog, ['instance'])).to.throw(CliError, 'restart takes one instance, got 0');
    expect(() => restartTarget(catalog, ['instance/a', 'instance/b'])).to.throw(CliError, 'restart takes one instance, got 2');
  });
});
