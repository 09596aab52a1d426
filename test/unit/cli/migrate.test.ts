/** `cairn migrate`: the instance it names, when it must clear spec.migrateTo first, the outcome it prints, and its flags. */
import { expect } from 'chai';
import { CommanderError } from 'commander';
import { migrateCommand } from '../../../cli/commands/migrate.js';
import { alreadyThere, lastMigrationFinished, migrateTarget, migrationOutcome } from '../../../cli/run/migrate.js';
import { CliError } from '../../../cli/client/errors.js';
import type { ApiObject } from '../../../cli/client/watch.js';
import { catalog } from './apply-fixtures.js';

function vm(migrateTo: string | undefined, migration?: Record<string, unknown>): ApiObject {
  return { metadata: { name: 'vm1', namespace: 'demo' }, spec: { driver: 'qemu', ...(migrateTo ? { migrateTo } : {}) }, ...(migration ? { status: { migration } } : {}) };
}

describe('cairn migrate', () => {
  describe('migrateTarget', () => {
    it('takes `instance NAME` and `instance/NAME`', () => {
      for (const args of [['instance', 'vm1'], ['instance/vm1'], ['instances', 'vm1'], ['instances.cairn.dev/vm1']]) {
        const t = migrateTarget(catalog, args);
        expect([t.r.kind, t.name], args.join(' ')).to.deep.equal(['Instance', 'vm1']);
      }
    });

    it('refuses other kinds, no name, and more than one', () => {
      expect(() => migrateTarget(catalog, ['volume/data'])).to.throw(CliError, 'cannot migrate volumes: only instances migrate');
      expect(() => migrateTarget(catalog, ['instance'])).to.throw(CliError, 'migrate takes one instance, got 0');
      expect(() => migrateTarget(catalog, ['instance/a', 'instance/b'])).to.throw(CliError, 'migrate takes one instance, got 2');
    });
  });

  it('does nothing for an instance already running on the node (not while a migration is in flight)', () => {
    const at = (nodeName: string, phase: string): ApiObject => ({ metadata: { name: 'vm1' }, status: { nodeName, phase } });
    expect(alreadyThere(at('node-b', 'Running'), 'node-b')).to.equal(true);
    expect(alreadyThere(at('node-a', 'Running'), 'node-b')).to.equal(false);
    expect(alreadyThere(at('node-b', 'Migrating'), 'node-b')).to.equal(false);
    expect(alreadyThere({ metadata: { name: 'vm1' } }, 'node-b')).to.equal(false);
  });

  describe('lastMigrationFinished (then the same node is asked again by clearing spec.migrateTo first)', () => {
    it('holds for a Completed or Failed migration to that node, whatever spec.migrateTo says', () => {
      for (const phase of ['Completed', 'Failed']) {
        expect(lastMigrationFinished(vm('node-b', { targetNode: 'node-b', phase }), 'node-b'), phase).to.equal(true);
        expect(lastMigrationFinished(vm('node-c', { targetNode: 'node-b', phase }), 'node-b'), phase).to.equal(true);
      }
    });

    it('does not for one in flight, to another node, or none', () => {
      expect(lastMigrationFinished(vm('node-b', { targetNode: 'node-b', phase: 'Transferring' }), 'node-b')).to.equal(false);
      expect(lastMigrationFinished(vm('node-b', { targetNode: 'node-c', phase: 'Failed' }), 'node-b')).to.equal(false);
      expect(lastMigrationFinished(vm('node-b'), 'node-b')).to.equal(false);
    });
  });

  describe('migrationOutcome', () => {
    it('is not done while in flight or while status reports another node', () => {
      expect(migrationOutcome(vm('node-b', { targetNode: 'node-b', phase: 'SwitchingOver' }), 'node-b')).to.deep.equal({ done: false });
      expect(migrationOutcome(vm('node-b', { targetNode: 'node-a', phase: 'Completed' }), 'node-b')).to.deep.equal({ done: false });
      expect(migrationOutcome(vm('node-b'), 'node-b')).to.deep.equal({ done: false });
    });

    it('Completed: one line with the mode, downtime and total time', () => {
      const out = migrationOutcome(vm('node-b', { targetNode: 'node-b', phase: 'Completed', mode: 'Live', downtimeMs: 112, totalTimeMs: 830 }), 'node-b');
      expect(out).to.deep.equal({ done: true, ok: true, text: 'migrated to node node-b (live): downtime 112 ms, total time 830 ms' });
      expect(migrationOutcome(vm('node-b', { targetNode: 'node-b', phase: 'Completed', mode: 'Cold' }), 'node-b')).to.deep.include({ text: 'migrated to node node-b (cold): downtime unknown, total time unknown' });
    });

    it('Failed: the reason and the message (with its hint)', () => {
      const message = 'live migration from node a to node node-b failed: x. Hint: y, then set spec.migrateTo again to retry: cairn migrate instance vm1 --to node-b';
      const out = migrationOutcome(vm('node-b', { targetNode: 'node-b', phase: 'Failed', reason: 'Timeout', message }), 'node-b');
      expect(out).to.deep.equal({ done: true, ok: false, text: `migration to node node-b failed (Timeout): ${message}` });
    });
  });

  describe('the command line', () => {
    function parse(args: string[]): Promise<unknown> {
      const cmd = migrateCommand().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      cmd.action(() => {});
      return cmd.parseAsync(args, { from: 'user' });
    }

    it('requires --to', async () => {
      const err = await parse(['instance', 'vm1']).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(CommanderError).and.to.have.property('code', 'commander.missingMandatoryOptionValue');
    });

    it('accepts --to, --wait, --timeout (a duration, default 10m) and -n', async () => {
      const cmd = migrateCommand().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      cmd.action(() => {});
      await cmd.parseAsync(['instance/vm1', '--to', 'node-b', '--wait', '--timeout', '2m', '-n', 'demo'], { from: 'user' });
      expect(cmd.opts()).to.include({ to: 'node-b', wait: true, timeout: 120_000, namespace: 'demo' });
      const defaults = migrateCommand().exitOverride();
      defaults.action(() => {});
      await defaults.parseAsync(['instance', 'vm1', '--to', 'node-b'], { from: 'user' });
      expect(defaults.opts().timeout).to.equal(600_000);
    });

    it('refuses a timeout that is not a duration', async () => {
      const err = await parse(['instance', 'vm1', '--to', 'b', '--timeout', 'soon']).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(CommanderError).and.to.have.property('code', 'commander.invalidArgument');
    });

    it('--help says how a retry works and what moves live', () => {
      let help = '';
      migrateCommand().configureOutput({ writeOut: (s) => (help += s) }).outputHelp();
      expect(help).to.match(/--to <node>/).and.to.match(/--wait/).and.to.match(/--timeout <duration>/);
      expect(help).to.match(/To retry,\s+run this command again: it then clears spec\.migrateTo/);
      expect(help).to.match(/moves live/).and.to.contain('cairn migrate instance vm1 --to node-b');
    });
  });
});
