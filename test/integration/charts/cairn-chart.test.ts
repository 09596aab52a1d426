/**
 * Issue 15, acceptance 2: the charts, with the real Helm 3 binary. `helm
 * lint` is clean for both; charts/cairn's rendered objects validate against
 * the Kubernetes API schemas (kubernetes-models, generated from Kubernetes'
 * own OpenAPI), with its defaults and with every option set; its CRDs are
 * crds/ byte for byte; its values schema refuses bad values.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { DaemonSet, Deployment } from 'kubernetes-models/apps/v1';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ServiceAccount } from 'kubernetes-models/v1';
import { ruleAllows, type PolicyRule } from '../../../apiserver/auth/rbac.js';
import { Helm } from '../../support/helm.js';
import { CHARTS_DIR, CRD_DIR } from '../../support/paths.js';

const CHART = path.join(CHARTS_DIR, 'cairn');
type Validating = new (data: any) => { validate(): void };
const MODELS: Record<string, Validating> = {
  'v1/ServiceAccount': ServiceAccount,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'apps/v1/Deployment': Deployment,
  'apps/v1/DaemonSet': DaemonSet,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': CustomResourceDefinition,
};

describe('the Helm charts (real helm 3.17)', function () {
  this.timeout(60_000);
  const helm = new Helm('/dev/null');
  after(() => helm.cleanup());

  const render = async (args: string[]) => YAML.parseAllDocuments(await helm.ok(['template', 'cairn', CHART, '-n', 'cairn-system', '--include-crds', ...args])).map((d) => d.toJS()).filter(Boolean) as { apiVersion: string; kind: string; metadata: { name: string } }[];

  it('helm lint is clean for charts/cairn and charts/cairn-app (no warning, no error)', async () => {
    for (const chart of ['cairn', 'cairn-app']) {
      const out = await helm.ok(['lint', path.join(CHARTS_DIR, chart)]);
      expect(out, chart).to.include('0 chart(s) failed');
      expect(out, chart).to.not.match(/\[(WARNING|ERROR)\]/);
    }
  });

  for (const [what, args] of [
    ['its defaults', []],
    ['every option set', ['--set', 'controller.replicas=3', '--set', 'agent.nodeSelector.cairn/agent=yes', '--set', 'agent.labels.zone=a', '--set', 'metrics.scrape=false', '--set', 'image.tag=dev', '--set', 'agent.qemuAccelerator=tcg', '--set-json', 'agent.tolerations=[{"operator":"Exists"}]']],
  ] as const) {
    it(`renders objects that validate against the Kubernetes API schemas, with ${what}`, async () => {
      const objects = await render([...args]);
      const kinds = objects.map((o) => `${o.apiVersion}/${o.kind}`);
      expect(kinds.filter((k) => k.endsWith('/CustomResourceDefinition'))).to.have.length(fs.readdirSync(CRD_DIR).length);
      for (const k of ['apps/v1/Deployment', 'apps/v1/DaemonSet', 'rbac.authorization.k8s.io/v1/ClusterRole']) expect(kinds).to.include(k);
      for (const o of objects) {
        const Model = MODELS[`${o.apiVersion}/${o.kind}`];
        expect(Model, `a schema for ${o.apiVersion} ${o.kind}`).to.not.equal(undefined);
        expect(() => new Model!(o).validate(), `${o.kind} ${o.metadata.name}`).to.not.throw();
      }
    });
  }

  it('runs the controller as a 2-replica Deployment and the agent as a host-network, privileged DaemonSet with /dev/kvm, /dev/fuse and its data dir', async () => {
    const objects = (await render([])) as any[];
    const deployment = objects.find((o) => o.kind === 'Deployment');
    expect(deployment.spec.replicas).to.equal(2);
    expect(deployment.spec.template.metadata.annotations['prometheus.io/scrape']).to.equal('true');
    const agent = objects.find((o) => o.kind === 'DaemonSet').spec.template.spec;
    expect(agent.hostNetwork).to.equal(true);
    expect(agent.shareProcessNamespace, 'PID 1 is the pause process, which reaps orphans').to.equal(true);
    expect(agent.containers[0].securityContext.privileged).to.equal(true);
    expect(agent.volumes.map((v: any) => v.hostPath.path)).to.deep.equal(['/var/lib/cairn/agent', '/dev/kvm', '/dev/fuse']);
    expect(agent.containers[0].args).to.include('--cluster=demo');
  });

  it("grants the controller's ClusterRole every request the controller makes (its informers' lists and watches, the garbage collector's deletes and patches)", async () => {
    const objects = (await render([])) as any[];
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name.endsWith('-controller'));
    const user = { name: 'system:serviceaccount:cairn-system:cairn-controller', groups: [] };
    const allowed = (apiGroup: string, resource: string, verb: string) => (role.rules as PolicyRule[]).some((r) => ruleAllows(r, { user, verb, resource: { apiGroup, resource } }));
    const requests: Array<[string, string, string[]]> = [
      ...['clusters', 'nodes', 'instances', 'volumes', 'workitems'].map((r): [string, string, string[]] => ['cairn.dev', r, ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']]),
      ['cairn.dev', 'instances/status', ['update', 'patch']],
      ['coordination.k8s.io', 'leases', ['get', 'list', 'watch', 'create', 'update', 'delete']],
      ['', 'events', ['create', 'patch']],
      ['', 'secrets', ['list', 'watch', 'patch', 'delete']],
      ['', 'configmaps', ['list', 'watch', 'patch', 'delete']],
    ];
    const missing = requests.flatMap(([g, r, verbs]) => verbs.filter((v) => !allowed(g, r, v)).map((v) => `${v} ${g || 'core'}/${r}`));
    expect(missing).to.deep.equal([]);
  });

  it('carries crds/ byte for byte (run npm run chart:crds after changing a CRD)', () => {
    const mine = fs.readdirSync(CRD_DIR).sort();
    expect(fs.readdirSync(path.join(CHART, 'crds')).sort()).to.deep.equal(mine);
    for (const f of mine) expect(fs.readFileSync(path.join(CHART, 'crds', f), 'utf8'), `charts/cairn/crds/${f}: run npm run chart:crds`).to.equal(fs.readFileSync(path.join(CRD_DIR, f), 'utf8'));
  });

  it('refuses values its schema does not allow, naming them', async () => {
    const bad = await helm.run(['template', 'cairn', CHART, '--set', 'controller.replicas=0', '--set', 'cluster=Not_A_Name']);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.include('controller.replicas').and.to.include('cluster');
  });
});
