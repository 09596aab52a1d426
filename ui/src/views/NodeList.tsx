/** The nodes of the chosen cluster(s) with their allocation bars. */
import { useMemo } from 'preact/hooks';
import type { Instance } from '../../../api/instance';
import type { Node } from '../../../api/node';
import { formatBytes } from '../state/format';
import { detailHref } from '../state/route';
import { sortedItems } from '../state/store';
import { loadPerNode, nodeCapacity, type PlacedLoad } from '../state/summaries';
import { useLive } from './hooks';
import { Card, Empty } from './parts/Card';
import { LoadError } from './parts/LoadError';
import { memo } from './parts/Memo';
import { Pill } from './parts/Pill';
import { UsageBar } from './parts/UsageBar';
import { useSession } from './session';

export function NodeList() {
  const { cluster } = useSession();
  const nodes = useLive<Node>({ resource: 'nodes', namespace: cluster });
  const instances = useLive<Instance>({ resource: 'instances', namespace: cluster });
  const list = sortedItems(nodes.collection);
  return (
    <Card title={`Nodes (${list.length})`}>
      <LoadError connection={nodes.connection} allClusters={cluster === undefined} />
      {list.length === 0 ? <Empty>{nodes.collection.synced ? 'No nodes registered.' : 'Loading…'}</Empty> : <NodeCapacityRows nodes={list} instances={instances.collection.items} />}
    </Card>
  );
}

/** One row per node: phase, scheduling, cpu and memory allocation, instance count. */
export function NodeCapacityRows({ nodes, instances }: { nodes: Node[]; instances: ReadonlyMap<string, Instance> }) {
  const loads = useMemo(() => loadPerNode(instances.values()), [instances]);
  return (
    <div class="rows node-rows">
      <div class="row row-head">
        <span>Name</span>
        <span>Phase</span>
        <span>CPU</span>
        <span>Memory</span>
        <span>Instances</span>
      </div>
      {nodes.map((n) => (
        <NodeRow key={`${n.metadata.namespace}/${n.metadata.name}`} node={n} placed={loads.get(`${n.metadata.namespace}/${n.metadata.name}`)} />
      ))}
    </div>
  );
}

const NodeRow = memo(function NodeRow({ node, placed }: { node: Node; placed: PlacedLoad | undefined }) {
  const ns = node.metadata.namespace ?? '';
  const name = node.metadata.name ?? '';
  const capacity = nodeCapacity(node, placed);
  return (
    <a class="row" href={detailHref('nodes', ns, name)} data-testid="node-row" data-name={name} data-namespace={ns} data-phase={node.status?.phase ?? ''} data-unschedulable={String(!!node.spec?.unschedulable)}>
      <span class="name">
        {name}
        <small class="muted"> {ns}</small>
      </span>
      <span>
        <Pill word={node.status?.phase ?? 'NotReady'} /> <SchedulingBadge node={node} />
      </span>
      <UsageBar label="cpu" usage={capacity.cpu} format={String} />
      <UsageBar label="mem" usage={capacity.memory} format={formatBytes} />
      <span class="num">{capacity.instances}</span>
    </a>
  );
});

/** Cordoned or draining, when the node takes no new placements. */
export function SchedulingBadge({ node }: { node: Node }) {
  if (node.spec?.drain) return <span class="badge" title="spec.drain is true: instances are moved away">draining</span>;
  if (node.spec?.unschedulable) return <span class="badge" title="spec.unschedulable is true: nothing new is placed here">cordoned</span>;
  return null;
}
