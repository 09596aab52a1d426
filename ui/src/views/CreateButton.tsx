import { availability, cairnQuestion } from '../state/permissions';
import { useAccess } from './hooks';
import { useSession } from './session';

/** The button that opens the dialog; disabled for users who may not create instances. */
export function CreateButton({ onClick }: { onClick: () => void }) {
  const { cluster } = useSession();
  const question = cairnQuestion('create', 'instances', cluster);
  const { disabled, title } = availability(useAccess(question), question, 'Create objects from YAML manifests');
  return (
    <button type="button" class="primary" data-testid="action-create" disabled={disabled} title={title} onClick={onClick}>
      Create from YAML
    </button>
  );
}
