/**
 * How the client verbs find their server, as a user gets it wrong: a
 * missing kubeconfig, an unknown context, a flag overriding the
 * kubeconfig's token — each with kubectl's precedence and a message that
 * says what to do.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCairn } from '../../support/cairn-cli.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';

describe('cairn client verbs: reaching the server', function () {
  this.timeout(60_000);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cli-home-'));
  const bare = { ...process.env, HOME: home, KUBECONFIG: '' };
  let server: ServerProcess;

  before(async () => {
    server = await startServerProcess();
  });

  after(async () => {
    await server?.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('without any kubeconfig: says so and how to get one, exit 1', async () => {
    const r = await runCairn(['get', 'instances'], { env: bare });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('error: no kubeconfig').and.to.contain('hint: cairn server writes <data-dir>/admin.kubeconfig');
  });

  it('with a kubeconfig that does not exist: names it, exit 1; diff exits 2 (1 would mean "different")', async () => {
    const r = await runCairn(['get', 'instances', '--kubeconfig', path.join(home, 'nope')], { env: bare });
    expect([r.code, r.stderr]).to.deep.equal([1, `error: the kubeconfig ${path.join(home, 'nope')} does not exist\nhint: cairn server writes <data-dir>/admin.kubeconfig; pass it with --kubeconfig or export KUBECONFIG=...\n`]);
    expect((await runCairn(['diff', '-f', 'examples/', '--kubeconfig', path.join(home, 'nope')], { env: bare })).code).to.equal(2);
  });

  it('version --client needs neither a server nor a kubeconfig', async () => {
    const r = await runCairn(['version', '--client'], { env: bare });
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^Client Version: /);
  });

  it('version reaches the server of the kubeconfig', async () => {
    const r = await runCairn(['version', '--kubeconfig', server.kubeconfig]);
    expect(r.stdout).to.match(/^Client Version: .*\nServer Version: v1\.32\.0-cairn\./);
  });

  it('an unknown --context is named, with the contexts there are', async () => {
    const r = await runCairn(['get', 'clusters', '--kubeconfig', server.kubeconfig, '--context', 'nope']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('error: context "nope" does not exist in the kubeconfig (its contexts: cairn)');
  });

  it("--token overrides the kubeconfig's credentials, as kubectl's does", async () => {
    const r = await runCairn(['get', 'clusters', '--kubeconfig', server.kubeconfig, '--token', 'bogus']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^Error from server \(Unauthorized\)/);
  });

  it('a server that is not a URL, an unreadable CA or a file that is no kubeconfig is named, with where it came from', async () => {
    const notUrl = await runCairn(['get', 'clusters', '--server', '127.0.0.1:6443'], { env: bare });
    expect([notUrl.code, notUrl.stderr]).to.deep.equal([1, 'error: the server "127.0.0.1:6443" (--server) is not a URL\nhint: give it as https://HOST:PORT, e.g. https://127.0.0.1:6443\n']);
    const noCa = await runCairn(['get', 'clusters', '--kubeconfig', server.kubeconfig, '--certificate-authority', path.join(home, 'ca.crt')]);
    expect(noCa.code).to.equal(1);
    expect(noCa.stderr).to.match(new RegExp(`^error: cannot read the certificate authority ${path.join(home, 'ca.crt')} \\(--certificate-authority\\): it does not exist\nhint: `));
    const notKubeconfig = path.join(home, 'notes.txt');
    fs.writeFileSync(notKubeconfig, 'just some text\n');
    const r = await runCairn(['get', 'clusters', '--kubeconfig', notKubeconfig], { env: bare });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(new RegExp(`^error: cannot use the kubeconfig ${notKubeconfig}: .+\nhint: check that it is a kubeconfig`));
  });

  it('a refused connection names the server', async () => {
    const r = await runCairn(['get', 'clusters', '--kubeconfig', server.kubeconfig, '--server', 'https://127.0.0.1:1']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('The connection to the server https://127.0.0.1:1 was refused');
  });
});
