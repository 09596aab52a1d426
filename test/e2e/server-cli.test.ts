/**
 * The `cairn` command as an operator meets it: help on every command, the
 * version, one server per data dir, and a clean stop on SIGTERM.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CAIRN_BIN } from '../../hack/cairn-process.js';
import { ROOT } from '../support/paths.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const cairn = (...args: string[]) => spawnSync(process.execPath, [CAIRN_BIN, ...args], { encoding: 'utf8', timeout: 30_000 });

describe('the cairn command', function () {
  this.timeout(60_000);

  for (const cmd of [[], ['server'], ['apiserver'], ['version'], ['etcd'], ['etcd', 'defrag']]) {
    it(`cairn ${[...cmd, '--help'].join(' ')} prints usage and exits 0`, () => {
      const r = cairn(...cmd, '--help');
      expect(r.status).to.equal(0);
      expect(r.stdout).to.match(/Usage: cairn/);
    });
  }

  it('server --help shows examples', () => {
    expect(cairn('server', '--help').stdout).to.match(/Examples:/);
  });

  it('cairn version --client names the Kubernetes API level without a server', () => {
    const r = cairn('version', '--client');
    expect(r.status).to.equal(0);
    expect(r.stdout).to.match(/^Client Version: \d+\.\d+\.\d+ \(API compatible with Kubernetes 1\.32\)\n$/);
  });

  it('cairn --version prints the version of package.json, as version --client does', () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = cairn('--version');
    expect([r.status, r.stdout, r.stderr]).to.deep.equal([0, `${version}\n`, '']);
    expect(cairn('version', '--client').stdout).to.include(`Client Version: ${version} `);
  });

  it('rejects a bad flag value with a hint', () => {
    const r = cairn('server', '--port', 'eighty');
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.match(/"eighty" is not a port/);
  });

  it('apiserver --workers exits non-zero when no worker can start', () => {
    const dir = fs.mkdtempSync('/tmp/cairn-workers-');
    const r = cairn('apiserver', '--etcd-endpoints', 'http://127.0.0.1:9', '--workers', '2', '--crd-dir', '/nonexistent', '--port', '0', '--data-dir', dir);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.match(/every apiserver worker exited before serving/);
  });

  describe('one server per data dir', () => {
    let first: ServerProcess;
    before(async () => {
      first = await startServerProcess();
    });
    after(async () => first?.cleanup());

    it('a second server on the same data dir refuses to start, naming the first', () => {
      const r = cairn('server', '--data-dir', first.dataDir, '--port', '0');
      expect(r.status).to.equal(1);
      expect(r.stderr).to.include(`another cairn server (pid ${first.child.pid}) is using ${first.dataDir}`);
    });

    it('so does one over an external etcd: the controllers of both would share the data dir\'s identity', () => {
      const r = cairn('server', '--etcd-endpoints', 'http://127.0.0.1:9', '--data-dir', first.dataDir, '--port', '0');
      expect(r.status).to.equal(1);
      expect(r.stderr).to.include(`another cairn server (pid ${first.child.pid}) is using ${first.dataDir}`);
    });

    it('stops on SIGTERM, removing its lock, and leaves its kubeconfig 0600', async () => {
      expect(fs.statSync(first.kubeconfig).mode & 0o777).to.equal(0o600);
      await first.stop();
      expect(first.child.exitCode).to.equal(0);
      expect(fs.existsSync(`${first.dataDir}/server.pid`)).to.equal(false);
    });
  });
});
