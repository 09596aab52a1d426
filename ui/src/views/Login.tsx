import { useState } from 'preact/hooks';
import { createApi, errorText } from '../api/http';
import { whoami } from '../api/reviews';

/** The login page: paste a bearer token; it is checked with a SelfSubjectReview before it is kept. */
export function Login({ message, onLogin }: { message?: string; onLogin: (token: string, username: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(message);
  const [checking, setChecking] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    const trimmed = token.trim();
    if (!trimmed) return setError('Paste a token first.');
    setChecking(true);
    setError(undefined);
    try {
      onLogin(trimmed, await whoami(createApi(trimmed, () => undefined)));
    } catch (err) {
      setError(`The server did not accept this token: ${errorText(err)}`);
      setChecking(false);
    }
  }

  return (
    <main class="login">
      <form class="login-card" onSubmit={submit}>
        <h1 class="brand">Cairn</h1>
        <p class="muted">
          Paste a bearer token: the token of your kubeconfig, or one from <code>cairn user create</code>.
        </p>
        <label for="token">Token</label>
        <textarea
          id="token"
          data-testid="login-token"
          rows={3}
          autocomplete="off"
          spellcheck={false}
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) void submit(e);
          }}
        />
        {error && (
          <p class="banner banner-error" role="alert" data-testid="login-error">
            {error}
          </p>
        )}
        <button type="submit" class="primary" data-testid="login-submit" disabled={checking}>
          {checking ? 'Checking…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}
