/** What a refused write tells the user to run. */
import { expect } from 'chai';
import { recoveryCommand } from '../../../../apiserver/etcd/no-space.js';

describe('recoveryCommand', () => {
  it('names the endpoints and the TLS files the apiserver uses', () => {
    expect(recoveryCommand(['http://127.0.0.1:2379'])).to.equal('cairn etcd defrag --etcd-endpoints http://127.0.0.1:2379');
    expect(recoveryCommand(['https://a:2379', 'https://b:2379'], { caFile: '/etc/ca.crt', certFile: '/etc/c.crt', keyFile: '/etc/c.key' })).to.equal(
      'cairn etcd defrag --etcd-endpoints https://a:2379,https://b:2379 --etcd-cafile /etc/ca.crt --etcd-certfile /etc/c.crt --etcd-keyfile /etc/c.key',
    );
  });
});
