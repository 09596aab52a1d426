import type { WorkItem } from '../../../../api/workitem';
import { Card, Empty } from './Card';
import { Pill } from './Pill';

/** WorkItems (one per instance or replica per node) with their phase and last error. */
export function WorkItemsCard({ items, synced, showOwner }: { items: WorkItem[]; synced: boolean; showOwner?: boolean }) {
  return (
    <Card title="Work items" testid="workitems">
      {items.length === 0 ? (
        <Empty>{synced ? 'No work items.' : 'Loading…'}</Empty>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Node</th>
              <th>Type</th>
              {showOwner && <th>Owner</th>}
              <th>Phase</th>
              <th>Attempts</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {items.map((w) => {
              const e = w.status?.lastError;
              return (
                <tr key={w.metadata.name} data-testid="workitem-row" data-name={w.metadata.name}>
                  <td>{w.metadata.name}</td>
                  <td>{w.spec.nodeName}</td>
                  <td>{w.spec.type}</td>
                  {showOwner && <td>{`${w.spec.owner.kind.toLowerCase()} ${w.spec.owner.name}`}</td>}
                  <td>
                    <Pill word={w.status?.phase ?? 'Queued'} />
                  </td>
                  <td>{w.status?.attempts ?? 0}</td>
                  <td class="message">
                    {e && (
                      <>
                        <strong>{e.reason}</strong>: {e.message}
                        {e.hint && <div class="hint">Hint: {e.hint}</div>}
                      </>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Card>
  );
}
