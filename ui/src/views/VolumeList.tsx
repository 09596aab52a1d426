/** The volumes of the chosen cluster(s): size, replicas ready, phase and heal state. */
import { useMemo } from 'preact/hooks';
import type { Volume } from '../../../api/volume';
import { healState } from '../state/heal';
import { detailHref } from '../state/route';
import { sortedItems } from '../state/store';
import { useLive } from './hooks';
import { Card, Empty } from './parts/Card';
import { LoadError } from './parts/LoadError';
import { memo } from './parts/Memo';
import { Pill } from './parts/Pill';
import { useSession } from './session';

export function VolumeList() {
  const { cluster } = useSession();
  const { collection, connection } = useLive<Volume>({ resource: 'volumes', namespace: cluster });
  const volumes = useMemo(() => sortedItems(collection), [collection]);
  return (
    <Card title={`Volumes (${volumes.length})`}>
      <LoadError connection={connection} allClusters={cluster === undefined} />
      {volumes.length === 0 ? (
        <Empty>{collection.synced ? 'No volumes.' : 'Loading…'}</Empty>
      ) : (
        <div class="rows volume-rows">
          <div class="row row-head">
            <span>Name</span>
            <span>Phase</span>
            <span>Size</span>
            <span>Ready</span>
            <span>Driver</span>
            <span>Heal</span>
          </div>
          {volumes.map((v) => (
            <VolumeRow key={`${v.metadata.namespace}/${v.metadata.name}`} volume={v} />
          ))}
        </div>
      )}
    </Card>
  );
}

const VolumeRow = memo(function VolumeRow({ volume: v }: { volume: Volume }) {
  const ns = v.metadata.namespace ?? '';
  const name = v.metadata.name ?? '';
  const phase = v.metadata.deletionTimestamp ? 'Deleting' : (v.status?.phase ?? 'Pending');
  const heal = healState(v);
  return (
    <a class="row" href={detailHref('volumes', ns, name)} data-testid="volume-row" data-name={name} data-namespace={ns} data-phase={phase}>
      <span class="name">
        {name}
        <small class="muted"> {ns}</small>
      </span>
      <span>
        <Pill word={phase} title={v.status?.message} />
      </span>
      <span class="num">{v.spec.size}</span>
      <span class="num">
        {v.status?.readyReplicas ?? 0}/{v.spec.replicas ?? 1}
      </span>
      <span>{v.spec.driver ?? 'gluster'}</span>
      <span>{heal ? <Pill word={heal.tone === 'good' ? 'In sync' : heal.splitBrain ? 'Split-brain' : 'Healing'} tone={heal.tone} title={heal.text} /> : <span class="muted">—</span>}</span>
    </a>
  );
});
