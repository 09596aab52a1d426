/** Create from YAML: paste manifests, each document is created in turn and its outcome listed. */
import { useState } from 'preact/hooks';
import { type CreateResult, createFromYaml } from '../api/create';
import { errorText } from '../api/http';
import { Modal } from './parts/Modal';
import { useSession } from './session';

const EXAMPLE = `apiVersion: cairn.dev/v1alpha1
kind: Instance
metadata:
  name: hello
spec:
  driver: process
  cpus: 1
  memory: 32Mi
  process:
    command: ["/bin/sh", "-c", "while true; do date; sleep 5; done"]
`;

export function CreateDialog({ onClose }: { onClose: () => void }) {
  const { api, cluster } = useSession();
  const [text, setText] = useState(EXAMPLE);
  const [results, setResults] = useState<CreateResult[]>();
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    try {
      setResults(await createFromYaml(api, text, cluster));
    } catch (err) {
      setResults([{ subject: 'input', ok: false, message: errorText(err) }]);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal title="Create from YAML" onClose={onClose} testid="create-dialog">
      <form class="create-form" onSubmit={submit}>
        <p class="muted">
          One or more documents separated by <code>---</code>. Objects without a namespace go into {cluster ? <>cluster <strong>{cluster}</strong></> : 'their metadata.namespace (pick a cluster in the sidebar to default it)'}.
        </p>
        <textarea data-testid="create-yaml" rows={16} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        {results && (
          <ul class="results" data-testid="create-results">
            {results.map((r, i) => (
              <li key={i} class={r.ok ? 'ok' : 'failed'} data-ok={String(r.ok)}>
                <strong>{r.subject}</strong>: {r.message}
              </li>
            ))}
          </ul>
        )}
        <div class="modal-buttons">
          <button type="button" onClick={onClose} data-testid="create-close">
            Close
          </button>
          <button type="submit" class="primary" data-testid="create-submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
