/** changedForPlacement: which Node updates requeue the instances and volumes of the node. */
import { expect } from 'chai';
import type { Node } from '../../../api/node.js';
import { changedForPlacement } from '../../../controller/node-changes.js';

const node: Node = {
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Node',
  metadata: { name: 'n1', namespace: 'c', resourceVersion: '10', labels: { zone: 'a' } },
  spec: {},
  status: { phase: 'Ready', capacity: { cpus: 4, memory: '8Gi' }, allocated: { cpus: 1, memory: '1Gi' }, heartbeatTime: '2026-11-26T12:00:00Z', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
} as Node;
const withStatus = (s: Partial<NonNullable<Node['status']>>, rv = '11'): Node => ({ ...node, metadata: { ...node.metadata, resourceVersion: rv }, status: { ...node.status, ...s } });

describe('changedForPlacement', () => {
  it("ignores the controller's own allocation and heartbeat writes", () => {
    expect(changedForPlacement(node, withStatus({ allocated: { cpus: 2, memory: '2Gi' } }))).to.equal(false);
    expect(changedForPlacement(node, withStatus({ heartbeatTime: '2026-11-26T12:00:05Z' }))).to.equal(false);
    expect(changedForPlacement(node, withStatus({}))).to.equal(false);
  });

  it('sees what placement and health read: phase, conditions, capacity, addresses, labels, spec', () => {
    expect(changedForPlacement(node, withStatus({ phase: 'Unreachable' }))).to.equal(true);
    expect(changedForPlacement(node, withStatus({ conditions: [{ type: 'Ready', status: 'False', reason: 'LeaseExpired', message: '', lastTransitionTime: 'x' }] }))).to.equal(true);
    expect(changedForPlacement(node, withStatus({ capacity: { cpus: 8, memory: '8Gi' } }))).to.equal(true);
    expect(changedForPlacement(node, withStatus({ addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] }))).to.equal(true);
    expect(changedForPlacement(node, { ...node, metadata: { ...node.metadata, labels: { zone: 'b' } } })).to.equal(true);
    expect(changedForPlacement(node, { ...node, spec: { unschedulable: true } })).to.equal(true);
  });
});
