/** The failure report, like `cairn failures`: what is stuck, grouped by reason, with node, message and hint. */
import { useMemo } from 'preact/hooks';
import type { Cluster } from '../../../api/cluster';
import type { Instance } from '../../../api/instance';
import type { Node } from '../../../api/node';
import type { Volume } from '../../../api/volume';
import type { WorkItem } from '../../../api/workitem';
import { collectFailures, type Failure, groupByReason } from '../../../cli/status/failures';
import { plural } from '../state/format';
import { detailHref } from '../state/route';
import { useLive, useNow } from './hooks';
import { Card, Empty } from './parts/Card';
import { LoadError } from './parts/LoadError';
import { Ago } from './parts/Time';
import { useSession } from './session';

export function FailuresPage() {
  const { cluster } = useSession();
  const now = useNow();
  const clusters = useLive<Cluster>({ resource: 'clusters' });
  const nodes = useLive<Node>({ resource: 'nodes', namespace: cluster });
  const instances = useLive<Instance>({ resource: 'instances', namespace: cluster });
  const volumes = useLive<Volume>({ resource: 'volumes', namespace: cluster });
  const workItems = useLive<WorkItem>({ resource: 'workitems', namespace: cluster });
  const all = [clusters, nodes, instances, volumes, workItems];
  const synced = all.every((l) => l.collection.synced || l.connection.state === 'refused');
  const groups = useMemo(
    () =>
      groupByReason(
        collectFailures({
          clusters: [...clusters.collection.items.values()].filter((c) => !cluster || c.metadata.name === cluster),
          nodes: nodes.collection.items.values(),
          instances: instances.collection.items.values(),
          volumes: volumes.collection.items.values(),
          workItems: workItems.collection.items.values(),
        }),
      ),
    [cluster, ...all.map((l) => l.collection)],
  );
  const count = groups.reduce((n, g) => n + g.failures.length, 0);
  // Clusters are cluster-scoped: a user bound to one Cluster may not read them, and still gets the rest.
  const failing = [nodes, instances, volumes, workItems].find((l) => l.connection.state === 'refused' || l.connection.state === 'retrying');

  return (
    <div data-testid="failures" data-count={count} data-synced={String(synced)}>
      {failing && <LoadError connection={failing.connection} allClusters={cluster === undefined} />}
      {!synced ? (
        <Card title="Failures">
          <Empty>Loading…</Empty>
        </Card>
      ) : count === 0 ? (
        <Card title="Failures">
          <p class="all-good">No failures in {cluster ? `cluster ${cluster}` : 'any cluster'}.</p>
        </Card>
      ) : (
        <>
          <p class="summary">
            {plural(count, 'failure')} in {cluster ? `cluster ${cluster}` : 'all clusters'}, {plural(groups.length, 'reason')}.
          </p>
          {groups.map((g) => (
            <Card key={g.reason} title={`${g.reason} (${g.failures.length})`} testid="failure-group">
              <ul class="failure-list">
                {g.failures.map((f) => (
                  <FailureItem key={`${f.kind}/${f.namespace}/${f.name}/${f.message}`} failure={f} now={now} />
                ))}
              </ul>
            </Card>
          ))}
        </>
      )}
    </div>
  );
}

const PAGES = { Node: 'nodes', Instance: 'instances', Volume: 'volumes' } as const;

function FailureItem({ failure: f, now }: { failure: Failure; now: number }) {
  const page = f.kind in PAGES ? PAGES[f.kind as keyof typeof PAGES] : undefined;
  const label = `${f.kind.toLowerCase()} ${f.namespace ? `${f.namespace}/` : ''}${f.name}`;
  return (
    <li class="failure" data-testid="failure" data-kind={f.kind} data-name={f.name} data-reason={f.reason}>
      <div class="failure-title">
        {page && f.namespace ? <a href={detailHref(page, f.namespace, f.name)}>{label}</a> : <strong>{label}</strong>}
        {f.node && f.kind !== 'Node' && <span class="muted"> on node {f.node}</span>}
        {f.owner && <span class="muted"> ({f.owner}{f.attempts ? `, ${plural(f.attempts, 'attempt')}` : ''})</span>}
        {f.since && (
          <span class="muted small">
            {' '}
            · since <Ago iso={f.since} now={now} />
          </span>
        )}
      </div>
      {f.conditions && <div class="muted small">{f.conditions.join(', ')}</div>}
      <div class="failure-message">{f.message}</div>
      <div class="hint">Hint: {f.hint}</div>
    </li>
  );
}
