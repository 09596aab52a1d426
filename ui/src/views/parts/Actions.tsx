/**
 * Action buttons. Each asks the server whether the user may take its
 * action (an access review) and is disabled, with the reason as its title,
 * when they may not or when the object's state rules it out. An action
 * with `confirm` first asks in a dialog. The API's error message is shown
 * in the bar.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { errorText } from '../../api/http';
import { type AccessQuestion, availability } from '../../state/permissions';
import { useAccess } from '../hooks';
import { ErrorBanner } from './ErrorBanner';
import { Modal } from './Modal';

export interface Action {
  /** The data-testid is `action-<id>`. */
  id: string;
  label: string;
  question: AccessQuestion;
  /** The title of the enabled button. */
  purpose: string;
  /** Why the object cannot take the action now. */
  blocker?: string;
  danger?: boolean;
  /** Ask first: the dialog's title and text; its button has data-testid `confirm-<id>`. */
  confirm?: { title: string; text: ComponentChildren; button: string };
  /** The action; a promise keeps the button busy and reports its failure. */
  run: () => unknown;
}

/** A row of action buttons with one error line. */
export function ActionBar({ actions }: { actions: Action[] }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState<string>();
  const [confirming, setConfirming] = useState<Action>();

  async function execute(action: Action) {
    setConfirming(undefined);
    setError(undefined);
    setBusy(action.id);
    try {
      await action.run();
    } catch (err) {
      setError(`${action.label} failed: ${errorText(err)}`);
    } finally {
      setBusy(undefined);
    }
  }

  return (
    <div class="action-bar">
      <div class="actions">
        {actions.map((a) => (
          <ActionButton key={a.id} action={a} busy={busy === a.id} onClick={() => (a.confirm ? setConfirming(a) : void execute(a))} />
        ))}
      </div>
      <ErrorBanner message={error} onDismiss={() => setError(undefined)} />
      {confirming?.confirm && (
        <Modal title={confirming.confirm.title} onClose={() => setConfirming(undefined)}>
          <p>{confirming.confirm.text}</p>
          <div class="modal-buttons">
            <button type="button" onClick={() => setConfirming(undefined)} data-testid="confirm-cancel">
              Cancel
            </button>
            <button type="button" class={confirming.danger ? 'danger' : 'primary'} data-testid={`confirm-${confirming.id}`} onClick={() => void execute(confirming)}>
              {confirming.confirm.button}
            </button>
          </div>
        </Modal>
      )}
    </div>
  );
}

function ActionButton({ action, busy, onClick }: { action: Action; busy: boolean; onClick: () => void }) {
  const allowed = useAccess(action.question);
  const { disabled, title } = availability(allowed, action.question, action.purpose, action.blocker);
  return (
    <button type="button" class={action.danger ? 'danger' : undefined} data-testid={`action-${action.id}`} disabled={disabled || busy} title={title} aria-busy={busy} onClick={onClick}>
      {busy ? `${action.label}…` : action.label}
    </button>
  );
}
