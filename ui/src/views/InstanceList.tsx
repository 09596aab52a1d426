/**
 * The instances of the chosen cluster(s). Hundreds of rows stay cheap:
 * each row is memoized on its object (which keeps its identity until the
 * watch changes it), and rows off screen skip layout (content-visibility).
 */
import { useState } from 'preact/hooks';
import type { Instance } from '../../../api/instance';
import { findCondition } from '../state/conditions';
import { detailHref } from '../state/route';
import { sortedItems } from '../state/store';
import { useLive } from './hooks';
import { Card, Empty } from './parts/Card';
import { LoadError } from './parts/LoadError';
import { memo } from './parts/Memo';
import { Pill } from './parts/Pill';
import { useSession } from './session';

export function InstanceList() {
  const { cluster } = useSession();
  const { collection, connection } = useLive<Instance>({ resource: 'instances', namespace: cluster });
  const [filter, setFilter] = useState('');
  const all = sortedItems(collection);
  const shown = filter ? all.filter((i) => matches(i, filter.toLowerCase())) : all;
  return (
    <Card
      title={`Instances (${shown.length === all.length ? all.length : `${shown.length} of ${all.length}`})`}
      actions={<input type="search" class="filter" placeholder="Filter by name, node or phase" data-testid="instance-filter" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />}
    >
      <LoadError connection={connection} allClusters={cluster === undefined} />
      {shown.length === 0 ? <Empty>{!collection.synced ? 'Loading…' : all.length === 0 ? 'No instances.' : 'No instance matches the filter.'}</Empty> : <InstanceRows instances={shown} />}
    </Card>
  );
}

function matches(i: Instance, needle: string): boolean {
  return [i.metadata.name, i.metadata.namespace, i.status?.nodeName, i.status?.phase].some((v) => v?.toLowerCase().includes(needle));
}

/** A table of instances, one memoized row each. */
export function InstanceRows({ instances }: { instances: Instance[] }) {
  return (
    <div class="rows instance-rows">
      <div class="row row-head">
        <span>Name</span>
        <span>Phase</span>
        <span>Node</span>
        <span>Driver</span>
        <span>CPUs</span>
        <span>Memory</span>
        <span>Ready</span>
        <span>Restarts</span>
      </div>
      {instances.map((i) => (
        <InstanceRow key={`${i.metadata.namespace}/${i.metadata.name}`} instance={i} />
      ))}
    </div>
  );
}

const InstanceRow = memo(function InstanceRow({ instance: i }: { instance: Instance }) {
  const ns = i.metadata.namespace ?? '';
  const name = i.metadata.name ?? '';
  const phase = i.status?.phase ?? 'Pending';
  const ready = findCondition(i, 'Ready');
  const migration = i.status?.migration;
  return (
    <a class="row" href={detailHref('instances', ns, name)} data-testid="instance-row" data-name={name} data-namespace={ns} data-node={i.status?.nodeName ?? ''} data-phase={phase}>
      <span class="name">
        {name}
        <small class="muted"> {ns}</small>
      </span>
      <span>
        <Pill word={i.metadata.deletionTimestamp ? 'Deleting' : phase} title={i.status?.message} />
      </span>
      <span>
        {i.status?.nodeName ?? <span class="muted">—</span>}
        {migration?.phase && migration.phase !== 'Completed' && migration.phase !== 'Failed' && <small class="muted"> → {migration.targetNode}</small>}
      </span>
      <span>{i.spec.driver ?? 'process'}</span>
      <span class="num">{i.spec.cpus ?? 1}</span>
      <span class="num">{i.spec.memory ?? '128Mi'}</span>
      <span>{ready ? <Pill word={ready.status} title={`${ready.reason}: ${ready.message}`} /> : <span class="muted">—</span>}</span>
      <span class="num">{i.status?.restarts ?? 0}</span>
    </a>
  );
});
