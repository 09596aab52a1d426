/**
 * Every supported gluster option (api/gluster-options.ts), as the volfile
 * generator writes it, is accepted by real GlusterFS: `glusterfs
 * --volfile-check` validates each translator option against the
 * translator's own table and fails on a value it would not take, and
 * the log level takes effect. Each check
 * runs in the foreground and is killed once it has said, so none outlives
 * the test.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { GLUSTER_OPTIONS } from '../../../api/gluster-options.js';
import { clientVolfile, shdVolfile, type GlusterLayout } from '../../../controller/reconcilers/volume/volfiles.js';
import { eventually } from '../../support/eventually.js';

/** Values per option, the extremes of each range among them. */
const SAMPLES: Record<string, string[]> = {
  'cluster.quorum-type': ['auto', 'fixed', 'none'],
  'cluster.quorum-count': ['1', '3'],
  'cluster.favorite-child-policy': ['none', 'size', 'ctime', 'mtime', 'majority'],
  'cluster.data-self-heal-algorithm': ['full', 'diff'],
  'cluster.heal-timeout': ['5', '86400'],
  'network.ping-timeout': ['1', '1013'],
  'performance.write-behind': ['on', 'off'],
  'performance.write-behind-window-size': ['512KB', '1GB'],
  'diagnostics.client-log-level': ['CRITICAL', 'ERROR', 'WARNING', 'INFO', 'DEBUG', 'TRACE', 'NONE'],
};

describe('gluster options against real GlusterFS (glusterfs --volfile-check)', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-gluster-options-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * Validates a volfile with a foreground `glusterfs --volfile-check`: it exits non-zero on an option it
   * refuses, and otherwise logs its "Final graph" and goes on running (it would connect to the bricks),
   * so it is killed then.
   */
  async function check(name: string, volfile: string, quiet = false): Promise<string | undefined> {
    const file = path.join(dir, `${name}.vol`);
    const log = path.join(dir, `${name}.log`);
    fs.writeFileSync(file, volfile);
    const child = spawn('glusterfs', ['-N', '--volfile-check', '-f', file, '-l', log], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const text = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '');
    // A log level above INFO (CRITICAL, say) silences "Final graph" too: then still running after 5 s,
    // unrefused, counts as taken (a refusal comes in milliseconds).
    const started = Date.now();
    try {
      await eventually(`glusterfs to accept or refuse ${name}`, () => child.exitCode !== null || text().includes('Final graph:') || (quiet && Date.now() - started > 5000), 10_000, 20);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const code = await exited;
    if (text().includes('Final graph:') || (quiet && code === null)) return undefined;
    return text().split('\n').find((l) => /validation failed|Invalid arguments/.test(l)) ?? `exit ${code}`;
  }

  const layout = (options: Record<string, string>): GlusterLayout => ({
    volume: 'opt',
    volumeId: '6a1f4f2e-8c0b-4d55-9a3e-0c1d2e3f4a5b',
    bricks: [0, 1, 2].map((i) => ({ host: '127.0.0.1', port: 1 + i, path: `/nonexistent/b${i}` })),
    options,
  });

  it('samples every supported option', () => expect(Object.keys(SAMPLES)).to.have.members(Object.keys(GLUSTER_OPTIONS)));

  it('accepts each sample in the client and self-heal volfiles', async () => {
    const refused: string[] = [];
    for (const [key, values] of Object.entries(SAMPLES)) {
      for (const value of values) {
        const l = layout({ [key]: value });
        for (const [graph, text] of [['client', clientVolfile(l)], ['shd', shdVolfile(l)]] as const) {
          const quiet = key === 'diagnostics.client-log-level' && !['INFO', 'DEBUG', 'TRACE'].includes(value);
          const error = await check(`${key}-${value}-${graph}`, text, quiet);
          if (error) refused.push(`${key}=${value} (${graph}): ${error}`);
        }
      }
    }
    expect(refused).to.deep.equal([]);
  });

  it('can fail: a value the translator does not take is refused', async () => {
    const text = clientVolfile(layout({ 'diagnostics.client-log-level': 'INFO' })).replace('log-level INFO', 'log-level LOUD');
    expect(await check('bad', text)).to.match(/LOUD/);
  });

  it('diagnostics.client-log-level takes effect: DEBUG lines in the log (io-stats reads log-level; client-log-level it only validates)', async () => {
    expect(await check('debug', clientVolfile(layout({ 'diagnostics.client-log-level': 'DEBUG' })))).to.equal(undefined);
    expect(fs.readFileSync(path.join(dir, 'debug.log'), 'utf8')).to.match(/ D \[/);
  });
});
