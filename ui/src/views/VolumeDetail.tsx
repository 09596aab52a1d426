/** One volume: its replicas and bricks, heal state, conditions, work items and events. */
import type { Volume } from '../../../api/volume';
import type { WorkItem } from '../../../api/workitem';
import { deleteObject } from '../api/actions';
import { deleteBlocker } from '../state/action-rules';
import { healState } from '../state/heal';
import { cairnQuestion } from '../state/permissions';
import { detailHref } from '../state/route';
import { sortedItems } from '../state/store';
import { useLive, useLiveObject, useNow } from './hooks';
import { ActionBar } from './parts/Actions';
import { Card, Empty } from './parts/Card';
import { ConditionsTable } from './parts/ConditionsTable';
import { EventsCard } from './parts/EventsCard';
import { Fields } from './parts/Fields';
import { Gone } from './parts/Gone';
import { Pill } from './parts/Pill';
import { WorkItemsCard } from './parts/WorkItemsCard';
import { useSession } from './session';

export function VolumeDetail({ namespace, name }: { namespace: string; name: string }) {
  const { api } = useSession();
  const now = useNow();
  const { object: volume, snapshot } = useLiveObject<Volume>('volumes', namespace, name);
  const workItems = useLive<WorkItem>({ resource: 'workitems', namespace, fieldSelector: `spec.owner.name=${name}` });
  if (!volume) return <Gone kind="volume" namespace={namespace} name={name} synced={snapshot.collection.synced} list="#/volumes" />;

  const s = volume.status;
  const phase = volume.metadata.deletionTimestamp ? 'Deleting' : (s?.phase ?? 'Pending');
  const heal = healState(volume);
  const owned = sortedItems(workItems.collection).filter((w) => w.spec.owner.kind === 'Volume');
  return (
    <div class="detail" data-testid="volume-detail" data-name={name} data-phase={phase}>
      <div class="detail-head">
        <h2>
          {name} <Pill word={phase} title={s?.message} />
        </h2>
        <ActionBar
          actions={[
            {
              id: 'delete',
              label: 'Delete',
              danger: true,
              question: cairnQuestion('delete', 'volumes', namespace),
              purpose: 'Delete the volume and its replicas',
              blocker: deleteBlocker(volume),
              confirm: {
                title: `Delete volume ${name}?`,
                text: `Volume ${namespace}/${name} and its replicas are removed${volume.spec.reclaimPolicy === 'Retain' ? ' (reclaimPolicy Retain keeps the files on the nodes)' : ', with their data'}. This cannot be undone.`,
                button: 'Delete',
              },
              run: () => deleteObject(api, 'volumes', volume),
            },
          ]}
        />
      </div>
      <div class="grid">
        <Card title="Volume">
          <Fields
            rows={[
              ['Size', volume.spec.size],
              ['Capacity', s?.capacity],
              ['Replicas', `${s?.readyReplicas ?? 0} ready of ${volume.spec.replicas ?? 1}`],
              ['Driver', volume.spec.driver ?? 'gluster'],
              ['State', volume.spec.state],
              ['Arbiter', volume.spec.arbiter ? 'yes' : undefined],
              ['Allocation', volume.spec.allocation],
              ['Reclaim', volume.spec.reclaimPolicy],
              ['Message', s?.message],
              ['Options', volume.spec.options && Object.entries(volume.spec.options).map(([k, v]) => `${k}=${v}`).join(', ')],
            ]}
          />
        </Card>
        <Card title="Heal">
          {heal ? (
            <p data-testid="heal-state" data-pending={heal.pendingHeals} data-split-brain={heal.splitBrain}>
              <Pill word={heal.tone === 'good' ? 'In sync' : heal.splitBrain ? 'Split-brain' : 'Healing'} tone={heal.tone} /> {heal.text}
            </p>
          ) : (
            <Empty>No bricks: a {volume.spec.driver ?? 'gluster'} volume without GlusterFS bricks has nothing to heal.</Empty>
          )}
        </Card>
      </div>
      <Card title="Replicas and bricks">
        <ReplicaTable volume={volume} namespace={namespace} />
      </Card>
      <Card title="Conditions">
        <ConditionsTable conditions={s?.conditions} now={now} />
      </Card>
      <WorkItemsCard items={owned} synced={workItems.collection.synced} />
      <EventsCard kind="Volume" namespace={namespace} name={name} now={now} />
    </div>
  );
}

function ReplicaTable({ volume, namespace }: { volume: Volume; namespace: string }) {
  const replicas = [...(volume.status?.replicas ?? [])].sort((a, b) => a.index - b.index);
  if (replicas.length === 0) return <Empty>No replica placed yet.</Empty>;
  return (
    <table class="table" data-testid="bricks">
      <thead>
        <tr>
          <th>#</th>
          <th>Node</th>
          <th>State</th>
          <th>Size</th>
          <th>Brick</th>
          <th>Pending heals</th>
          <th>Split-brain</th>
          <th>Path / message</th>
        </tr>
      </thead>
      <tbody>
        {replicas.map((r) => (
          <tr key={r.index} data-testid="brick-row" data-node={r.nodeName ?? ''} data-state={r.state ?? ''}>
            <td>{r.index}</td>
            <td>{r.nodeName ? <a href={detailHref('nodes', namespace, r.nodeName)}>{r.nodeName}</a> : <span class="muted">—</span>}</td>
            <td>
              <Pill word={r.state ?? 'Pending'} />
            </td>
            <td>{r.size}</td>
            <td>{r.brick ? <><Pill word={r.brick.state ?? 'Unknown'} /> <small class="muted">{r.brick.address ? `${r.brick.address}:` : ':'}{r.brick.port}</small></> : <span class="muted">—</span>}</td>
            <td class="num">{r.brick?.pendingHeals ?? ''}</td>
            <td class="num">{r.brick?.splitBrain ?? ''}</td>
            <td class="message">
              {r.path && <code>{r.path}</code>}
              {r.message && <div>{r.message}</div>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
