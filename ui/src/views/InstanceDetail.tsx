/**
 * One instance: its state, actions, migration progress, conditions, work
 * items and events — all live — and the tabs for its log and, for VMs,
 * its serial console.
 */
import type { Instance } from '../../../api/instance';
import type { WorkItem } from '../../../api/workitem';
import { consoleBlocker } from '../state/action-rules';
import { detailHref, type InstanceTab } from '../state/route';
import { sortedItems } from '../state/store';
import { ConsoleView } from './ConsoleView';
import { useLive, useLiveObject, useNow } from './hooks';
import { InstanceActions } from './InstanceActions';
import { LogView } from './LogView';
import { MigrationProgress } from './MigrationProgress';
import { Card } from './parts/Card';
import { ConditionsTable } from './parts/ConditionsTable';
import { EventsCard } from './parts/EventsCard';
import { Fields } from './parts/Fields';
import { Gone } from './parts/Gone';
import { Pill } from './parts/Pill';
import { Ago } from './parts/Time';
import { WorkItemsCard } from './parts/WorkItemsCard';

interface Props {
  namespace: string;
  name: string;
  tab: InstanceTab;
}

export function InstanceDetail({ namespace, name, tab }: Props) {
  const { object: instance, snapshot } = useLiveObject<Instance>('instances', namespace, name);
  if (!instance) return <Gone kind="instance" namespace={namespace} name={name} synced={snapshot.collection.synced} list="#/instances" />;
  const phase = instance.metadata.deletionTimestamp ? 'Deleting' : (instance.status?.phase ?? 'Pending');
  return (
    <div class="detail" data-testid="instance-detail" data-name={name} data-phase={phase}>
      <div class="detail-head">
        <h2>
          {name} <Pill word={phase} title={instance.status?.message} />
        </h2>
        <InstanceActions instance={instance} />
      </div>
      <Tabs instance={instance} current={tab} />
      {tab === 'overview' && <InstanceOverview instance={instance} />}
      {tab === 'logs' && <LogView namespace={namespace} name={name} />}
      {tab === 'console' && <ConsoleView instance={instance} />}
    </div>
  );
}

function Tabs({ instance, current }: { instance: Instance; current: InstanceTab }) {
  const ns = instance.metadata.namespace ?? '';
  const name = instance.metadata.name ?? '';
  const noConsole = consoleBlocker(instance);
  const tab = (id: InstanceTab, label: string, blocked?: string) =>
    blocked ? (
      <span class="tab disabled" aria-disabled="true" title={blocked} data-testid={`tab-${id}`}>
        {label}
      </span>
    ) : (
      <a class={`tab${current === id ? ' active' : ''}`} href={detailHref('instances', ns, name, id)} data-testid={`tab-${id}`} aria-current={current === id ? 'page' : undefined}>
        {label}
      </a>
    );
  return (
    <nav class="tabs">
      {tab('overview', 'Overview')}
      {tab('logs', 'Logs')}
      {tab('console', 'Console', noConsole)}
    </nav>
  );
}

function InstanceOverview({ instance: i }: { instance: Instance }) {
  const now = useNow();
  const ns = i.metadata.namespace ?? '';
  const name = i.metadata.name ?? '';
  const workItems = useLive<WorkItem>({ resource: 'workitems', namespace: ns, fieldSelector: `spec.owner.name=${name}` });
  const owned = sortedItems(workItems.collection).filter((w) => w.spec.owner.kind === 'Instance');
  const s = i.status;
  const term = s?.lastTermination;
  return (
    <>
      <MigrationProgress instance={i} />
      <div class="grid">
        <Card title="Status">
          <Fields
            rows={[
              ['Node', s?.nodeName ? <a href={detailHref('nodes', ns, s.nodeName)}>{s.nodeName}</a> : <span class="muted">not placed</span>, 'instance-node'],
              ['Phase', s?.phase],
              ['Reason', s?.reason],
              ['Message', s?.message],
              ['Run state', i.spec.runState ?? 'Running'],
              ['Started', <Ago iso={s?.startedAt} now={now} />],
              ['Restarts', String(s?.restarts ?? 0)],
              ['PID', s?.pid === undefined ? undefined : String(s.pid)],
              ['Accelerator', s?.qemu?.accelerator],
              ['VM state', s?.qemu?.qmpState],
              ['Last exit', term && [term.reason, term.exitCode === undefined ? undefined : `code ${term.exitCode}`, term.signal].filter(Boolean).join(', ')],
              ['Last failover', s?.lastFailover && `${s.lastFailover.fromNode} → ${s.lastFailover.toNode}`],
              ['Generation', `${i.metadata.generation ?? '?'} (observed ${s?.observedGeneration ?? 'none yet'})`],
            ]}
          />
        </Card>
        <Card title="Spec">
          <Fields
            rows={[
              ['Driver', i.spec.driver ?? 'process'],
              ['CPUs', String(i.spec.cpus ?? 1)],
              ['Memory', i.spec.memory ?? '128Mi'],
              ['Restart policy', i.spec.restartPolicy],
              ['Failover', i.spec.failoverPolicy],
              ['Command', i.spec.process && <code>{[...i.spec.process.command, ...(i.spec.process.args ?? [])].join(' ')}</code>],
              ['Pinned to', i.spec.placement?.nodeName],
              ['Migrate to', i.spec.migrateTo],
              ['Volumes', i.spec.volumes?.map((v) => <a key={v.name} href={detailHref('volumes', ns, v.volumeName)}>{v.volumeName} </a>)],
            ]}
          />
        </Card>
      </div>
      <Card title="Conditions">
        <ConditionsTable conditions={s?.conditions} now={now} />
      </Card>
      <WorkItemsCard items={owned} synced={workItems.collection.synced} />
      <EventsCard kind="Instance" namespace={ns} name={name} now={now} />
    </>
  );
}
