/**
 * The CLI's own kubeconfig reader against client-node's: for every
 * kubeconfig it reads, the same server, TLS settings, token and namespace
 * as loadKubeConfig (the connection flags applied alike); for anything it
 * does not know, null, so that client-node reads it.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dump } from 'js-yaml';
import { loadKubeConfig, type ConnectionOptions } from '../../../api/client/kubeconfig.js';
import { readKubeconfig } from '../../../cli/client/kubeconfig-file.js';

type Doc = Record<string, unknown>;

const cairnKubeconfig = (over: { cluster?: Doc; user?: Doc; context?: Doc } = {}): Doc => ({
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'cairn', cluster: { server: 'https://127.0.0.1:6443/', 'certificate-authority-data': 'Q0EK', ...over.cluster } }],
  users: [{ name: 'admin', user: { token: 'abc.def', ...over.user } }],
  contexts: [
    { name: 'cairn', context: { cluster: 'cairn', user: 'admin', namespace: 'demo', ...over.context } },
    { name: 'other', context: { cluster: 'cairn', user: 'admin' } },
  ],
  'current-context': 'cairn',
});

describe('the CLI kubeconfig reader', () => {
  let dir: string;
  let saved: string | undefined;
  const write = (doc: Doc | string, name = 'config'): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, typeof doc === 'string' ? doc : dump(doc));
    return file;
  };

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-kubeconfig-'));
    saved = process.env.KUBECONFIG;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** What client-node makes of the same options, in the reader's terms. */
  function clientNode(opts: ConnectionOptions) {
    const kc = loadKubeConfig(opts);
    const c = kc.getCurrentCluster()!;
    const cluster = { server: c.server, caData: c.caData, caFile: c.caFile, skipTLSVerify: c.skipTLSVerify, tlsServerName: c.tlsServerName };
    return { cluster, token: kc.getCurrentUser()?.token, namespace: kc.getContextObject(kc.getCurrentContext())?.namespace };
  }

  const same = (opts: ConnectionOptions) => {
    const mine = readKubeconfig(opts);
    expect(mine, 'read without client-node').to.not.equal(null);
    expect(JSON.parse(JSON.stringify(mine))).to.deep.equal(JSON.parse(JSON.stringify(clientNode(opts))));
    return mine!;
  };

  it('reads a kubeconfig as Cairn writes it as client-node does', () => {
    const s = same({ kubeconfig: write(cairnKubeconfig()) });
    expect(s).to.deep.include({ token: 'abc.def', namespace: 'demo' });
    expect(s.cluster.server).to.equal('https://127.0.0.1:6443');
  });

  it('resolves a relative certificate-authority from the file, and reads tls-server-name and insecure-skip-tls-verify', () => {
    same({ kubeconfig: write(cairnKubeconfig({ cluster: { 'certificate-authority-data': undefined, 'certificate-authority': 'pki/ca.crt', 'tls-server-name': 'cairn.local' } })) });
    same({ kubeconfig: write(cairnKubeconfig({ cluster: { 'certificate-authority-data': undefined, 'insecure-skip-tls-verify': true } })) });
  });

  it('applies --context and the connection flags as client-node does', () => {
    const kubeconfig = write(cairnKubeconfig());
    same({ kubeconfig, context: 'other' });
    same({ kubeconfig, server: 'https://10.0.0.1:6443', token: 'other.token', caFile: 'ca.pem' });
    same({ kubeconfig, insecureSkipTlsVerify: true });
  });

  it('takes --server and --token without a kubeconfig', () => {
    same({ server: 'https://10.0.0.1:6443', token: 't.t', caFile: '/etc/ca.pem' });
  });

  it('finds the file in KUBECONFIG', () => {
    process.env.KUBECONFIG = write(cairnKubeconfig(), 'env-config');
    same({});
  });

  it('leaves to client-node what it does not read', () => {
    const cases: Record<string, Doc | string> = {
      'an exec plugin': cairnKubeconfig({ user: { token: undefined, exec: { command: 'get-token', apiVersion: 'client.authentication.k8s.io/v1' } } }),
      'a client certificate': cairnKubeconfig({ user: { 'client-certificate': 'c.crt', 'client-key': 'c.key' } }),
      'basic auth': cairnKubeconfig({ user: { token: undefined, username: 'u', password: 'p' } }),
      'a proxy': cairnKubeconfig({ cluster: { 'proxy-url': 'http://proxy:3128' } }),
      'a token file': cairnKubeconfig({ user: { token: undefined, 'token-file': '/var/run/token' } }),
      'a context without a user': cairnKubeconfig({ context: { user: undefined } }),
      'an unknown context': { ...cairnKubeconfig(), 'current-context': 'nope' },
      'a cluster without a server elsewhere in the file': { ...cairnKubeconfig(), clusters: [...(cairnKubeconfig().clusters as Doc[]), { name: 'broken', cluster: {} }] },
      'no YAML': 'clusters: [',
    };
    for (const [what, doc] of Object.entries(cases)) expect(readKubeconfig({ kubeconfig: write(doc) }), what).to.equal(null);
    expect(readKubeconfig({ kubeconfig: write(cairnKubeconfig()), context: 'nope' }), 'an unknown --context').to.equal(null);
    process.env.KUBECONFIG = [write(cairnKubeconfig(), 'a'), write(cairnKubeconfig(), 'b')].join(path.delimiter);
    expect(readKubeconfig({}), 'several files in KUBECONFIG').to.equal(null);
  });
});
