import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadCrds } from '../../../apiserver/crd-loader.js';

describe('crd-loader', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-crds-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const crd = (description: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: things.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { kind: Thing, plural: things }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: { type: object, description: ${description} }
`;

  it('refuses a malformed file, naming it, rather than serving what it could read', () => {
    fs.writeFileSync(path.join(dir, 'thing.yaml'), `${crd('fine')}  extra: [unclosed\n`);
    expect(() => loadCrds(dir)).to.throw(/thing\.yaml/);
  });

  it('reads YAML 1.2 core: a date stays a string', () => {
    fs.writeFileSync(path.join(dir, 'thing.yaml'), crd('2026-11-27'));
    const [def] = loadCrds(dir);
    expect(JSON.stringify(def)).to.contain('"description":"2026-11-27"');
  });
});
