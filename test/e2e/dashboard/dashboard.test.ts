/**
 * Issue 16, acceptance 2: the dashboard in real headless Chromium (Debian's,
 * through playwright-core) against a real `cairn server` with three agents
 * running the examples (a gluster volume, two process instances) and a VM
 * booting the test guest under qemu. It logs in, sees the nodes and
 * instances, migrates the VM from the UI and watches it arrive, follows a
 * log, types into the VM's console, and, as a viewer, finds the
 * destructive actions disabled. Screenshots land in test-artifacts/dashboard/.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { Browser, Page } from 'playwright-core';
import type { Instance } from '../../../api/instance.js';
import { startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';
import { EXAMPLES_DIR } from '../../support/paths.js';
import { launchChromium, newContext, screenshot } from '../../support/browser.js';
import { testGuest } from '../../support/test-guest.js';

const NODES = ['node-a', 'node-b', 'node-c'];
const SUITE = 'dashboard';
const UI_WAIT = 30_000;

describe('the web dashboard in headless Chromium (e2e)', function () {
  this.timeout(300_000);
  let c: TestCluster;
  let browser: Browser;
  const ns = () => c.name;
  const vm = () => c.client.get('Instance', ns(), 'vm') as Promise<Instance | undefined>;
  const adminToken = () => (YAML.parse(fs.readFileSync(c.kubeconfig, 'utf8')) as { users: Array<{ user: { token: string } }> }).users[0]!.user.token;

  async function login(token: string): Promise<Page> {
    const page = await (await newContext(browser)).newPage();
    await page.goto(`${c.server.url}/ui/`);
    await page.getByTestId('login-token').fill(token);
    await page.getByTestId('login-submit').click();
    await page.getByTestId('whoami').waitFor({ timeout: UI_WAIT });
    return page;
  }

  before(async () => {
    const g = testGuest();
    c = await startTestCluster({ agents: NODES });
    await c.client.patch('Cluster', '', ns(), { spec: { driverDefaults: { qemu: { kernel: g.kernel, initrd: g.initrd, cmdline: g.cmdline } } } });
    for (const file of ['20-volume.yaml', '25-instances.yaml', 'qemu/vm.yaml']) {
      const r = await c.cairn(['apply', '-f', path.join(EXAMPLES_DIR, file)]);
      expect(r.code, r.stderr).to.equal(0);
    }
    const instances = async () => (await c.client.listAll('Instance', { namespace: ns() })).items as Instance[];
    await eventually('the examples Running', async () => {
      const items = await instances();
      return items.length === 3 && items.every((i) => i.status?.phase === 'Running');
    }, 180_000, 500, async () => (await instances()).map((i) => ({ name: i.metadata.name, status: i.status })));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await c?.cleanup();
  });

  it('logs in with the kubeconfig token and shows the three nodes and the example instances', async () => {
    const page = await login(adminToken());
    expect(await page.getByTestId('whoami').textContent()).to.include('admin');
    await page.goto(`${c.server.url}/ui/#/nodes`);
    await eventually('three nodes', async () => (await page.getByTestId('node-row').count()) === 3, UI_WAIT, 100);
    await page.goto(`${c.server.url}/ui/#/instances`);
    await eventually('the example instances, Running', async () => {
      const rows = page.getByTestId('instance-row');
      const names = await rows.evaluateAll((els) => els.map((e) => `${e.getAttribute('data-name')}:${e.getAttribute('data-phase')}`));
      return ['ticker:Running', 'vm:Running', 'writer:Running'].every((n) => names.includes(n));
    }, UI_WAIT, 200);
    await screenshot(page, SUITE, 'instances');
    await page.goto(`${c.server.url}/ui/#/`);
    await page.waitForTimeout(500);
    await screenshot(page, SUITE, 'overview');
    await page.context().close();
  });

  it('migrates the VM from the UI and shows it arrive on the other node', async () => {
    const page = await login(adminToken());
    const from = (await vm())!.status!.nodeName!;
    const to = NODES.find((n) => n !== from)!;
    await page.goto(`${c.server.url}/ui/#/instances/${ns()}/vm`);
    await page.getByTestId('action-migrate').click();
    await page.getByTestId('migrate-target').selectOption(to);
    await page.getByTestId('migrate-confirm').click();
    await eventually(`the page shows the VM on ${to}`, async () => (await page.getByTestId('instance-node').textContent())?.includes(to) ?? false, 120_000, 200);
    expect((await vm())!.status!.nodeName).to.equal(to);
    await screenshot(page, SUITE, 'migrated');
    await page.context().close();
  });

  it('follows an instance log that updates', async () => {
    const page = await login(adminToken());
    await page.goto(`${c.server.url}/ui/#/instances/${ns()}/vm/logs`);
    const output = page.getByTestId('log-output');
    await eventually('log lines', async () => /CAIRN-HEARTBEAT seq=\d+/.test((await output.textContent()) ?? ''), UI_WAIT, 100);
    const seqs = async () => [...((await output.textContent()) ?? '').matchAll(/CAIRN-HEARTBEAT seq=(\d+)/g)].map((m) => Number(m[1]));
    const first = Math.max(...(await seqs()));
    await eventually('newer heartbeats appear', async () => Math.max(...(await seqs())) > first + 5, UI_WAIT, 100);
    await screenshot(page, SUITE, 'logs');
    await page.context().close();
  });

  it("types into the VM's serial console", async () => {
    const page = await login(adminToken());
    await page.goto(`${c.server.url}/ui/#/instances/${ns()}/vm/console`);
    const console_ = page.getByTestId('console');
    await eventually('heartbeats in the terminal', async () => /CAIRN-HEARTBEAT/.test((await console_.textContent()) ?? ''), UI_WAIT, 100);
    await console_.click();
    await page.keyboard.type('typed-in-the-browser');
    await page.keyboard.press('Enter');
    await eventually('the guest echoes the line', async () => ((await console_.textContent()) ?? '').includes('CAIRN-ECHO typed-in-the-browser'), UI_WAIT, 100);
    await screenshot(page, SUITE, 'console');
    await page.context().close();
  });

  it('disables the destructive actions for a viewer', async () => {
    const out = path.join(c.dir, 'viewer.kubeconfig');
    const r = await c.cairn(['user', 'create', 'vera', '--role', 'viewer', '-o', out]);
    expect(r.code, r.stderr).to.equal(0);
    const token = (YAML.parse(fs.readFileSync(out, 'utf8')) as { users: Array<{ user: { token: string } }> }).users[0]!.user.token;
    const page = await login(token);
    expect(await page.getByTestId('whoami').textContent()).to.include('vera');
    // Disabled because the server said no: every button is disabled while the reviews are pending too.
    const refused = async (action: string) => (await page.getByTestId(action).isDisabled()) && /^You are not allowed to /.test((await page.getByTestId(action).getAttribute('title')) ?? '');
    await page.goto(`${c.server.url}/ui/#/instances/${ns()}/ticker`);
    for (const action of ['action-delete', 'action-migrate', 'action-stop', 'action-restart']) {
      await eventually(`${action} refused`, () => refused(action), UI_WAIT, 100);
    }
    await page.goto(`${c.server.url}/ui/#/nodes/${ns()}/node-a`);
    for (const action of ['action-cordon', 'action-drain']) {
      await eventually(`${action} refused`, () => refused(action), UI_WAIT, 100);
    }
    await screenshot(page, SUITE, 'viewer');
    await page.context().close();
  });
});
