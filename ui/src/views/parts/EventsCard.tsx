import { eventSelector, eventTime, type KubeEvent, sortEvents } from '../../state/events';
import { useLive } from '../hooks';
import { Card, Empty } from './Card';
import { Pill } from './Pill';
import { Ago } from './Time';

/** The Events about one object, live (watched with an involvedObject field selector). */
export function EventsCard({ kind, namespace, name, now }: { kind: string; namespace: string; name: string; now: number }) {
  const { collection, connection } = useLive<KubeEvent>({ resource: 'events', namespace, fieldSelector: eventSelector(kind, name) });
  const events = sortEvents(collection.items.values());
  return (
    <Card title="Events" testid="events">
      {(connection.state === 'retrying' || connection.state === 'refused') && <p class="muted">Events unavailable: {connection.error}</p>}
      {events.length === 0 ? (
        <Empty>{collection.synced ? 'No events.' : 'Loading…'}</Empty>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th>Type</th>
              <th>Reason</th>
              <th>Message</th>
              <th>From</th>
              <th>Count</th>
              <th>Last seen</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.metadata.uid ?? e.metadata.name}>
                <td>
                  <Pill word={e.type ?? 'Normal'} />
                </td>
                <td>{e.reason}</td>
                <td class="message">{e.message}</td>
                <td>{[e.source?.component, e.source?.host].filter(Boolean).join(', ')}</td>
                <td>{e.count ?? 1}</td>
                <td class="nowrap">
                  <Ago iso={eventTime(e)} now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
