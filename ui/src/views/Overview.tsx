/**
 * The cluster at a glance: node capacity, instances and volumes by phase,
 * convergence, and a pointer to the failures — all live from the watches.
 */
import type { Instance } from '../../../api/instance';
import type { Node } from '../../../api/node';
import type { Volume } from '../../../api/volume';
import { detailHref } from '../state/route';
import { sortedItems } from '../state/store';
import { convergence, countByPhase } from '../state/summaries';
import { toneOf } from '../state/tones';
import { useLive } from './hooks';
import { Card, Empty } from './parts/Card';
import { LoadError } from './parts/LoadError';
import { Pill } from './parts/Pill';
import { NodeCapacityRows } from './NodeList';
import { useSession } from './session';

const PENDING_SHOWN = 12;

export function Overview() {
  const { cluster } = useSession();
  const nodes = useLive<Node>({ resource: 'nodes', namespace: cluster });
  const instances = useLive<Instance>({ resource: 'instances', namespace: cluster });
  const volumes = useLive<Volume>({ resource: 'volumes', namespace: cluster });
  const nodeList = sortedItems(nodes.collection);
  const synced = nodes.collection.synced && instances.collection.synced && volumes.collection.synced;
  const progress = convergence(nodeList, instances.collection.items.values(), volumes.collection.items.values());

  const failing = [nodes, instances, volumes].find((l) => l.connection.state === 'refused' || l.connection.state === 'retrying');
  return (
    <div class="grid">
      {failing && (
        <div class="wide">
          <LoadError connection={failing.connection} allClusters={cluster === undefined} />
        </div>
      )}
      <PhaseCard title="Instances" testid="instances-by-phase" counts={countByPhase(instances.collection.items.values())} total={instances.collection.items.size} href="#/instances" />
      <PhaseCard title="Volumes" testid="volumes-by-phase" counts={countByPhase(volumes.collection.items.values())} total={volumes.collection.items.size} href="#/volumes" />
      <Card title="Convergence" testid="convergence">
        {!synced ? (
          <Empty>Loading…</Empty>
        ) : (
          <>
            <p class="big-number" data-converged={progress.converged} data-total={progress.total}>
              {progress.converged}
              <span class="muted"> / {progress.total} converged</span>
            </p>
            <div class="usage-track usage-ok wide">
              <span class="usage-fill" style={{ width: `${progress.total ? (progress.converged / progress.total) * 100 : 100}%` }} />
            </div>
            {progress.pending.length > 0 && (
              <ul class="pending">
                {progress.pending.slice(0, PENDING_SHOWN).map((p) => (
                  <li key={`${p.kind}/${p.namespace}/${p.name}`}>
                    <a href={detailHref(`${p.kind.toLowerCase()}s` as 'nodes', p.namespace ?? '', p.name)}>
                      {p.kind.toLowerCase()} {p.namespace}/{p.name}
                    </a>{' '}
                    <Pill word={p.phase} />
                  </li>
                ))}
                {progress.pending.length > PENDING_SHOWN && <li class="muted">and {progress.pending.length - PENDING_SHOWN} more</li>}
              </ul>
            )}
            <p class="muted small">
              Converged: the controller has seen the latest spec and the object is Ready (or Stopped as asked). <a href="#/failures">See failures</a>.
            </p>
          </>
        )}
      </Card>
      <Card title={`Nodes (${nodeList.length})`} testid="node-capacity" wide>
        {nodeList.length === 0 ? <Empty>{nodes.collection.synced ? 'No nodes registered.' : 'Loading…'}</Empty> : <NodeCapacityRows nodes={nodeList} instances={instances.collection.items} />}
      </Card>
    </div>
  );
}

function PhaseCard({ title, counts, total, href, testid }: { title: string; counts: Record<string, number>; total: number; href: string; testid: string }) {
  const phases = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return (
    <Card title={title} testid={testid} actions={<a href={href}>All {title.toLowerCase()}</a>}>
      <p class="big-number">
        {total}
        <span class="muted"> in total</span>
      </p>
      {total > 0 && (
        <div class="stack" aria-hidden="true">
          {phases.map(([phase, n]) => (
            <span key={phase} class={`stack-part tone-${toneOf(phase)}`} style={{ flexGrow: n }} title={`${phase}: ${n}`} />
          ))}
        </div>
      )}
      <ul class="phase-counts">
        {phases.map(([phase, n]) => (
          <li key={phase} data-phase={phase} data-count={n}>
            <Pill word={phase} /> <strong>{n}</strong>
          </li>
        ))}
      </ul>
    </Card>
  );
}
