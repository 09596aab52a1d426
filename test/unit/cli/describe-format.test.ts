import { expect } from 'chai';
import { fieldLines, titleCase } from '../../../cli/client/describe-fields.js';
import { describeObject, eventAge, type DescribedObject, type EventRecord } from '../../../cli/client/describe-format.js';
import { DESCRIBE_PADDING, tabwrite } from '../../../cli/client/tabwriter.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

const instance: DescribedObject = {
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Instance',
  metadata: {
    name: 'web',
    namespace: 'demo',
    uid: 'u1',
    generation: 2,
    creationTimestamp: ago(600),
    labels: { tier: 'front', app: 'web' },
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', note: 'hello' },
    finalizers: ['cairn.dev/controller'],
  },
  spec: { memory: '16Mi', process: { command: ['sleep', '600'] }, volumes: [{ name: 'data', volumeName: 'vol', readOnly: false }], placement: {} },
  status: {
    phase: 'Running',
    nodeName: 'node-a',
    conditions: [
      { type: 'Scheduled', status: 'True', reason: 'Scheduled', message: 'placed on node node-a', lastTransitionTime: ago(600), observedGeneration: 2 },
      { type: 'Ready', status: 'False', reason: 'Starting', message: 'waiting\nfor readiness', lastTransitionTime: ago(90) },
    ],
  },
};

const event = (e: Partial<EventRecord>): EventRecord => ({ type: 'Normal', reason: 'Scheduled', message: 'placed', source: { component: 'cairn-controller' }, ...e });

describe('describe fields', () => {
  it('labels fields in Title Case as kubectl does, keeping keys that are not plain words', () => {
    expect(titleCase('observedGeneration')).to.equal('Observed Generation');
    expect(titleCase('uid')).to.equal('UID');
    expect(titleCase('apiVersion')).to.equal('API Version');
    expect(titleCase('operationId')).to.equal('Operation ID');
    expect(titleCase('cairn.dev/zone')).to.equal('cairn.dev/zone');
  });

  it('renders nested maps indented, scalar lists one item a line, lists of maps as - items, sorted keys', () => {
    const text = tabwrite(fieldLines(instance.spec!, '  '), DESCRIBE_PADDING);
    expect(text.split('\n')).to.deep.equal([
      '  Memory:     16Mi',
      '  Placement:  <none>',
      '  Process:',
      '    Command:',
      '      sleep',
      '      600',
      '  Volumes:',
      '  - Name:         data',
      '    Read Only:    false',
      '    Volume Name:  vol',
    ]);
  });
});

describe('describeObject', () => {
  const text = describeObject(instance, [event({ count: 1, firstTimestamp: ago(600), lastTimestamp: ago(600) })], NOW);
  const lines = text.split('\n');

  it('starts with the identity block, labels sorted, last-applied annotation left out', () => {
    expect(lines.slice(0, 11)).to.deep.equal([
      'Name:         web',
      'Namespace:    demo',
      'Labels:       app=web',
      '              tier=front',
      'Annotations:  note: hello',
      'API Version:  cairn.dev/v1alpha1',
      'Kind:         Instance',
      'Generation:   2',
      `Created:      ${ago(600)} (10m ago)`,
      'Finalizers:   cairn.dev/controller',
      'Spec:',
    ]);
  });

  it('shows status fields without the conditions, which get their own table', () => {
    expect(text).to.contain('Status:\n  Node Name:  node-a\n  Phase:      Running\n');
    expect(text).to.not.contain('Last Transition Time');
  });

  it('tabulates conditions with reason, age, observed generation and a one-line message', () => {
    expect(text).to.contain(
      [
        'Conditions:',
        '  Type       Status  Reason     Age  ObservedGeneration  Message',
        '  ----       ------  ------     ---  ------------------  -------',
        '  Scheduled  True    Scheduled  10m  2                   placed on node node-a',
        '  Ready      False   Starting   90s  <none>              waiting for readiness',
      ].join('\n'),
    );
  });

  it('tabulates events the way kubectl does', () => {
    expect(text).to.match(/Events:\n  Type    Reason     Age   From              Message\n  ----    ------     ----  ----              -------\n  Normal  Scheduled  10m   cairn-controller  placed\n$/);
  });

  it('says <none> for no events and no conditions', () => {
    const bare = describeObject({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: 'demo', creationTimestamp: ago(5) } }, [], NOW);
    expect(bare).to.contain('Labels:       <none>\nAnnotations:  <none>');
    expect(bare).to.not.contain('Namespace:');
    expect(bare).to.contain('Conditions:   <none>\nEvents:       <none>\n');
  });

  it('puts a WorkItem\'s last error, with its hint, before the spec and names its controller', () => {
    const workItem: DescribedObject = {
      apiVersion: 'cairn.dev/v1alpha1',
      kind: 'WorkItem',
      metadata: { name: 'web.node-a', ownerReferences: [{ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name: 'web', uid: 'u1', controller: true }] },
      spec: { type: 'InstanceRuntime' },
      status: { phase: 'Failed', lastError: { time: ago(30), hint: 'install qemu-system-x86_64', message: 'qemu not found', reason: 'DriverUnavailable' } },
    };
    const out = describeObject(workItem, undefined, NOW);
    expect(out).to.contain('Controlled By:  Instance/web');
    expect(out).to.contain(['Last Error:', '  Reason:   DriverUnavailable', '  Message:  qemu not found', '  Hint:     install qemu-system-x86_64', `  Time:     ${ago(30)}`, 'Spec:'].join('\n'));
    expect(out).to.match(/Status:\n  Phase: +Failed\n/);
  });
});

describe('eventAge', () => {
  it('prints a single event\'s age, and a repeated one as kubectl: last (xN over first)', () => {
    expect(eventAge(event({ firstTimestamp: ago(45) }), NOW)).to.equal('45s');
    expect(eventAge(event({ count: 3, firstTimestamp: ago(600), lastTimestamp: ago(120) }), NOW)).to.equal('2m (x3 over 10m)');
    expect(eventAge(event({ eventTime: ago(300), series: { count: 4, lastObservedTime: ago(60) } }), NOW)).to.equal('60s (x4 over 5m)');
    expect(eventAge(event({}), NOW)).to.equal('<unknown>');
  });
});
