import type { Condition } from '../../../../api/types';
import { Pill } from './Pill';
import { Ago } from './Time';
import { Empty } from './Card';

/** An object's status.conditions: type, status, reason, message, last transition. */
export function ConditionsTable({ conditions, now }: { conditions: Condition[] | undefined; now: number }) {
  if (!conditions || conditions.length === 0) return <Empty>No conditions reported yet.</Empty>;
  return (
    <table class="table" data-testid="conditions">
      <thead>
        <tr>
          <th>Type</th>
          <th>Status</th>
          <th>Reason</th>
          <th>Message</th>
          <th>Last transition</th>
        </tr>
      </thead>
      <tbody>
        {conditions.map((c) => (
          <tr key={c.type} data-type={c.type} data-status={c.status}>
            <td>{c.type}</td>
            <td>
              <Pill word={c.status} />
            </td>
            <td>{c.reason}</td>
            <td class="message">{c.message}</td>
            <td class="nowrap">
              <Ago iso={c.lastTransitionTime} now={now} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
