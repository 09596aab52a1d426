/** One node: its state and capacity, cordon/drain/uncordon, its instances, work items and events. */
import { useMemo } from 'preact/hooks';
import type { Instance } from '../../../api/instance';
import type { Node } from '../../../api/node';
import type { WorkItem } from '../../../api/workitem';
import { cordonNode, drainNode, uncordonNode } from '../api/actions';
import { cordonBlocker, drainBlocker, uncordonBlocker } from '../state/action-rules';
import { formatBytes } from '../state/format';
import { cairnQuestion } from '../state/permissions';
import { sortedItems } from '../state/store';
import { loadPerNode, nodeCapacity } from '../state/summaries';
import { useLive, useLiveObject, useNow, useScopeFor } from './hooks';
import { InstanceRows } from './InstanceList';
import { SchedulingBadge } from './NodeList';
import { ActionBar } from './parts/Actions';
import { Card, Empty } from './parts/Card';
import { ConditionsTable } from './parts/ConditionsTable';
import { EventsCard } from './parts/EventsCard';
import { Fields } from './parts/Fields';
import { Gone } from './parts/Gone';
import { Pill } from './parts/Pill';
import { Ago } from './parts/Time';
import { UsageBar } from './parts/UsageBar';
import { WorkItemsCard } from './parts/WorkItemsCard';
import { useSession } from './session';

export function NodeDetail({ namespace, name }: { namespace: string; name: string }) {
  const { api } = useSession();
  const now = useNow();
  const { object: node, snapshot } = useLiveObject<Node>('nodes', namespace, name);
  const instances = useLive<Instance>({ resource: 'instances', namespace: useScopeFor(namespace) });
  const workItems = useLive<WorkItem>({ resource: 'workitems', namespace, fieldSelector: `spec.nodeName=${name}` });
  const placed = useMemo(() => sortedItems(instances.collection).filter((i) => i.metadata.namespace === namespace && i.status?.nodeName === name), [instances.collection, namespace, name]);
  if (!node) return <Gone kind="node" namespace={namespace} name={name} synced={snapshot.collection.synced} list="#/nodes" />;

  const capacity = nodeCapacity(node, loadPerNode(placed).get(`${namespace}/${name}`));
  const s = node.status;
  const patch = cairnQuestion('patch', 'nodes', namespace);
  return (
    <div class="detail" data-testid="node-detail" data-name={name} data-phase={s?.phase ?? ''}>
      <div class="detail-head">
        <h2>
          {name} <Pill word={s?.phase ?? 'NotReady'} title={s?.message} /> <SchedulingBadge node={node} />
        </h2>
        <ActionBar
          actions={[
            { id: 'cordon', label: 'Cordon', question: patch, purpose: 'Place nothing new here (spec.unschedulable)', blocker: cordonBlocker(node), run: () => cordonNode(api, node) },
            {
              id: 'drain',
              label: 'Drain',
              question: patch,
              purpose: 'Cordon and move every instance away (spec.drain)',
              blocker: drainBlocker(node),
              confirm: { title: `Drain node ${name}?`, text: `Every instance on ${name} is moved to another node (VMs live where they allow it; pinned instances are stopped). Volume replicas stay.`, button: 'Drain' },
              run: () => drainNode(api, node),
            },
            { id: 'uncordon', label: 'Uncordon', question: patch, purpose: 'Make it schedulable again (also ends a drain)', blocker: uncordonBlocker(node), run: () => uncordonNode(api, node) },
          ]}
        />
      </div>
      <div class="grid">
        <Card title="Capacity">
          <UsageBar label="cpu" usage={capacity.cpu} format={String} />
          <UsageBar label="mem" usage={capacity.memory} format={formatBytes} />
          <Fields
            rows={[
              ['Instances', String(capacity.instances)],
              ['Volume replicas', s?.allocated?.volumeReplicas === undefined ? undefined : String(s.allocated.volumeReplicas)],
              ['Storage', s?.allocatable?.storage && `${s.allocated?.storage ?? '0'} of ${s.allocatable.storage}`],
            ]}
          />
        </Card>
        <Card title="Status">
          <Fields
            rows={[
              ['Phase', s?.phase],
              ['Message', s?.message],
              ['Addresses', s?.addresses?.map((a) => a.address).join(', ')],
              ['Agent', s?.agentVersion],
              ['Heartbeat', <Ago iso={s?.heartbeatTime} now={now} />],
              ['Accelerator', s?.accelerator],
              ['Drivers', s?.drivers?.map((d) => `${d.name}${d.available ? '' : ' (unavailable)'}`).join(', ')],
              ['OS', s?.nodeInfo && [s.nodeInfo.osImage, s.nodeInfo.kernelVersion, s.nodeInfo.architecture].filter(Boolean).join(', ')],
              ['Drain', s?.drain && (s.drain.message ?? `${s.drain.instancesRemaining ?? 0} instances left`)],
            ]}
          />
        </Card>
      </div>
      <Card title="Conditions">
        <ConditionsTable conditions={s?.conditions} now={now} />
      </Card>
      <Card title={`Instances on ${name} (${placed.length})`}>{placed.length === 0 ? <Empty>No instance is placed here.</Empty> : <InstanceRows instances={placed} />}</Card>
      <WorkItemsCard items={sortedItems(workItems.collection)} synced={workItems.collection.synced} showOwner />
      <EventsCard kind="Node" namespace={namespace} name={name} now={now} />
    </div>
  );
}
