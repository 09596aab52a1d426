import { expect } from 'chai';
import fc from 'fast-check';
import { hashToken, newToken, tokenId } from '../../../../api/token-format.js';
import { describeRequest, nonResourceAttributes, resourceAttributes } from '../../../../apiserver/auth/attributes.js';
import { UnionAuthenticator } from '../../../../apiserver/auth/authenticator.js';
import { discoveryAuthorizer, forbidden, mastersAuthorizer, UnionAuthorizer, type Decision } from '../../../../apiserver/auth/authorizer.js';
import { acceptance, joinTokenIdOf } from '../../../../apiserver/auth/stored-tokens.js';
import { tokensToDelete } from '../../../../apiserver/auth/token-cleaner.js';
import { tokenCauses } from '../../../../apiserver/validation/token-rules.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';

const alice = { name: 'alice', groups: ['team'] };
const token = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'auth.cairn.dev/v1alpha1', kind: 'Token', metadata: { name: 'abcdefghij' }, spec: { secretHash: 'x', ...spec } });
const NOW = new Date('2026-11-22T10:00:00Z');

describe('token format', () => {
  it('draws <10 a-z0-9>.<32 base62> tokens whose id is the part before the dot, stored as SHA-256', () => {
    const t = newToken();
    expect(t.token).to.match(/^[a-z0-9]{10}\.[A-Za-z0-9]{32}$/);
    expect(tokenId(t.token)).to.equal(t.id);
    expect(t.secretHash).to.equal(hashToken(t.token));
    expect(newToken().token).not.to.equal(t.token);
  });

  it('finds no id in anything else (property)', () => {
    fc.assert(fc.property(fc.string(), (s) => tokenId(s) === undefined || /^[a-z0-9]{10}\.[A-Za-z0-9]{32}$/.test(s)));
    for (const s of ['', 'abc', 'abcdefghij.', 'ABCDEFGHIJ.' + 'a'.repeat(32), 'abcdefghij.' + 'a'.repeat(31), ` abcdefghij.${'a'.repeat(32)}`]) expect(tokenId(s), s).to.equal(undefined);
  });
});

describe('stored token acceptance', () => {
  it('a node token is its node: system:node:<cluster>:<node> in system:nodes', () => {
    expect(acceptance(token({ type: 'node', cluster: 'c1', nodeName: 'n1' }), NOW)).to.deep.equal({ user: { name: 'system:node:c1:n1', groups: ['system:nodes'], node: { cluster: 'c1', name: 'n1' } } });
  });

  it('a user token is its user with its groups; a join token is a bootstrapper named by its id', () => {
    expect(acceptance(token({ type: 'user', user: 'alice', groups: ['ops'] }), NOW)).to.deep.equal({ user: { name: 'alice', groups: ['ops'] } });
    const j = acceptance(token({ type: 'join', cluster: 'c1' }), NOW) as { user: { name: string; groups: string[] } };
    expect(j.user).to.deep.equal({ name: 'system:bootstrap:abcdefghij', groups: ['system:bootstrappers'] });
    expect(joinTokenIdOf(j.user)).to.equal('abcdefghij');
    expect(joinTokenIdOf({ name: 'system:bootstrap:abcdefghij', groups: [] })).to.equal(undefined);
  });

  it('refuses revoked, expired and incomplete tokens, saying what to do', () => {
    expect(acceptance(token({ type: 'join', cluster: 'c1', revoked: true }), NOW)).to.deep.equal({ refused: 'token abcdefghij was revoked; create a new one with: cairn token create --cluster c1' });
    expect((acceptance(token({ type: 'node', cluster: 'c1', nodeName: 'n', expires: '2026-11-22T10:00:00Z' }), NOW) as { refused: string }).refused).to.match(/expired at 2026-11-22T10:00:00Z; join the node again/);
    expect(acceptance(token({ type: 'node', cluster: 'c1', nodeName: 'n', expires: '2026-11-22T10:00:01Z' }), NOW)).to.have.property('user');
    expect(acceptance(token({ type: 'node', cluster: 'c1' }), NOW)).to.deep.equal({ refused: 'token abcdefghij lacks spec.nodeName; delete it and issue a new one' });
    expect(acceptance(token({ type: 'user' }), NOW)).to.have.property('refused');
  });

  it('refuses a token whose expiry does not parse (a leap second passes the schema, and once never expired)', () => {
    expect((acceptance(token({ type: 'node', cluster: 'c1', nodeName: 'n', expires: '2020-06-30T23:59:60Z' }), NOW) as { refused: string }).refused).to.match(/expired at 2020-06-30T23:59:60Z/);
  });

  it('refuses to store an expiry that does not parse, on create and on update (422 spec.expires)', () => {
    const leap = token({ type: 'join', cluster: 'c1', expires: '2020-06-30T23:59:60Z' });
    const expired = token({ type: 'join', cluster: 'c1', expires: '2020-06-30T00:00:00Z' });
    for (const old of [undefined, expired]) expect(tokenCauses(leap, old).map((c) => [c.reason, c.field])).to.deep.equal([['FieldValueInvalid', 'spec.expires']]);
    expect(tokenCauses(expired, undefined)).to.deep.equal([]);
    // One already stored (before this check, or by a restore) is past: a parseable expiry is a lengthening.
    const later = token({ type: 'join', cluster: 'c1', expires: '2099-01-01T00:00:00Z' });
    expect(tokenCauses(later, leap).map((c) => [c.reason, c.field])).to.deep.equal([['FieldValueForbidden', 'spec.expires']]);
  });
});

describe('request attributes', () => {
  const info = (o: object) => ({ group: 'cairn.dev', version: 'v1alpha1', plural: 'instances', ...o });
  it('maps methods to kube verbs', () => {
    const verb = (m: string, o: object = {}, q: Record<string, unknown> = {}) => resourceAttributes(alice, m, info(o), q).verb;
    expect(verb('GET', { name: 'a' })).to.equal('get');
    expect(verb('GET')).to.equal('list');
    expect(verb('GET', {}, { watch: 'true' })).to.equal('watch');
    expect(verb('GET', {}, { watch: '1' })).to.equal('watch');
    expect(verb('GET', {}, { watch: 'false' })).to.equal('list');
    expect(verb('POST')).to.equal('create');
    expect(verb('PUT', { name: 'a' })).to.equal('update');
    expect(verb('PATCH', { name: 'a' })).to.equal('patch');
    expect(verb('DELETE', { name: 'a' })).to.equal('delete');
    expect(verb('DELETE')).to.equal('deletecollection');
  });

  it('keeps the scope and the selectors, and describes the request for messages', () => {
    const a = resourceAttributes(alice, 'GET', info({ namespace: 'c1', subresource: 'status', name: 'w' }), { fieldSelector: 'spec.nodeName=n1', labelSelector: ['a=b', 'c=d'] });
    expect(a.resource).to.deep.equal({ apiGroup: 'cairn.dev', resource: 'instances', subresource: 'status', namespace: 'c1', name: 'w', fieldSelector: 'spec.nodeName=n1', labelSelector: 'a=b' });
    expect(describeRequest(a)).to.equal('get instances.cairn.dev/status "w" in namespace "c1"');
    expect(describeRequest(nonResourceAttributes(alice, 'POST', '/cairn/v1/join'))).to.equal('post path "/cairn/v1/join"');
  });
});

describe('authorizer chain', () => {
  const attrs = resourceAttributes(alice, 'DELETE', { group: 'cairn.dev', version: 'v1alpha1', plural: 'instances', namespace: 'c1', name: 'w' }, {});
  const fixed = (d: Decision) => ({ authorize: () => d });

  it('the first allow or deny decides; nobody deciding is a deny with the reasons given', async () => {
    expect(await new UnionAuthorizer([fixed({ decision: 'noOpinion' }), fixed({ decision: 'allow' }), fixed({ decision: 'deny', reason: 'x' })]).authorize(attrs)).to.deep.equal({ decision: 'allow' });
    expect(await new UnionAuthorizer([fixed({ decision: 'deny', reason: 'no' }), fixed({ decision: 'allow' })]).authorize(attrs)).to.deep.equal({ decision: 'deny', reason: 'no' });
    expect(await new UnionAuthorizer([fixed({ decision: 'noOpinion', reason: 'r1' }), fixed({ decision: 'noOpinion' })]).authorize(attrs)).to.deep.equal({ decision: 'deny', reason: 'r1' });
    expect(await new UnionAuthorizer([]).authorize(attrs)).to.deep.equal({ decision: 'deny', reason: 'no rule allows it' });
  });

  it('system:masters may do anything; everyone may read discovery but nothing else by default', () => {
    expect(mastersAuthorizer.authorize({ ...attrs, user: { name: 'admin', groups: ['system:masters'] } })).to.deep.equal({ decision: 'allow' });
    expect(mastersAuthorizer.authorize(attrs)).to.deep.equal({ decision: 'noOpinion' });
    for (const p of ['/api', '/api/v1', '/apis', '/apis/cairn.dev', '/apis/cairn.dev/v1alpha1', '/openapi/v3', '/openapi/v3/apis/cairn.dev/v1alpha1', '/version']) {
      expect(discoveryAuthorizer.authorize(nonResourceAttributes(alice, 'GET', p)), p).to.deep.equal({ decision: 'allow' });
    }
    for (const [m, p] of [['POST', '/apis'], ['GET', '/metrics'], ['GET', '/cairn/v1/join']]) {
      expect(discoveryAuthorizer.authorize(nonResourceAttributes(alice, m!, p!)), p).to.deep.equal({ decision: 'noOpinion' });
    }
  });

  it('a 403 names the user, the verb, the resource and the namespace as kube words it', () => {
    const e = forbidden(attrs, 'no RBAC rule allows it');
    expect(e.code).to.equal(403);
    expect(e.message).to.equal('instances.cairn.dev "w" is forbidden: User "alice" cannot delete resource "instances" in API group "cairn.dev" in the namespace "c1": no RBAC rule allows it');
    const list = resourceAttributes(alice, 'GET', { group: '', version: 'v1', plural: 'namespaces' }, {});
    expect(forbidden(list, '').message).to.equal('namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');
    expect(forbidden(nonResourceAttributes(alice, 'GET', '/metrics'), 'x').message).to.equal('forbidden: User "alice" cannot get path "/metrics": x');
  });
});

describe('authenticator chain', () => {
  it('the first authenticator that recognises the token answers, adding system:authenticated', async () => {
    const none = { authenticate: () => null };
    const refuse = { authenticate: () => ({ refused: 'expired' }) };
    const who = { authenticate: () => ({ user: { ...alice } }) };
    expect(await new UnionAuthenticator([none, who, refuse]).authenticate('Bearer x')).to.deep.equal({ user: { name: 'alice', groups: ['team', 'system:authenticated'] } });
    expect(await new UnionAuthenticator([refuse, who]).authenticate('Bearer x')).to.deep.equal({ refused: 'expired' });
    expect(await new UnionAuthenticator([none]).authenticate('Bearer x')).to.equal(null);
  });
});

describe('token cleaner', () => {
  it('deletes a token an hour after it expired, never one without an expiry', () => {
    const t = (name: string, expires?: string) => ({ metadata: { name }, spec: { type: 'node', ...(expires ? { expires } : {}) } });
    const now = Date.parse('2026-11-22T12:00:00Z');
    const tokens = [t('old', '2026-11-22T10:59:59Z'), t('hour', '2026-11-22T11:00:00Z'), t('recent', '2026-11-22T11:30:00Z'), t('live', '2026-11-23T00:00:00Z'), t('forever')];
    expect(tokensToDelete(tokens, now)).to.deep.equal(['old', 'hour']);
    expect(tokensToDelete([t('leap', '2020-06-30T23:59:60Z')], now), 'an expiry that does not parse counts as past').to.deep.equal(['leap']);
  });
});
