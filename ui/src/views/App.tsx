/**
 * The top of the dashboard: the login gate and, once a token is accepted,
 * the session (API client, live store, access cache) every view uses. A
 * token the server later refuses (expired, revoked) ends the session and
 * says so on the login page.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, createApi, errorText } from '../api/http';
import { whoami } from '../api/reviews';
import { AccessCache } from '../state/access';
import { Hub } from '../state/live';
import { forgetToken, loadCluster, loadToken, saveCluster, saveToken } from '../state/session';
import { Login } from './Login';
import { type Session, SessionContext } from './session';
import { Shell } from './Shell';

type Gate =
  | { state: 'checking'; token: string }
  | { state: 'unreachable'; token: string; error: string }
  | { state: 'out'; message?: string }
  | { state: 'in'; token: string; username: string };

export function App() {
  const [gate, setGate] = useState<Gate>(() => {
    const token = loadToken();
    return token ? { state: 'checking', token } : { state: 'out' };
  });

  const logout = (message?: string) => {
    forgetToken();
    setGate({ state: 'out', message });
  };

  // A token kept from before a reload is checked again before it is used.
  useEffect(() => {
    if (gate.state !== 'checking') return;
    const api = createApi(gate.token, () => undefined);
    whoami(api).then(
      (username) => setGate({ state: 'in', token: gate.token, username }),
      (err) =>
        err instanceof ApiError && err.status === 401
          ? logout(`Your saved token no longer works: ${err.message}`)
          : setGate({ state: 'unreachable', token: gate.token, error: errorText(err) }),
    );
  }, [gate]);

  if (gate.state === 'checking') return <div class="splash">Checking your token…</div>;
  if (gate.state === 'unreachable') {
    return (
      <div class="splash">
        <p>
          Cannot reach the API server: {gate.error}{' '}
          <button type="button" onClick={() => setGate({ state: 'checking', token: gate.token })}>
            Try again
          </button>{' '}
          <button type="button" class="link" onClick={() => logout()}>
            Log out
          </button>
        </p>
      </div>
    );
  }
  if (gate.state === 'out') {
    return (
      <Login
        message={gate.message}
        onLogin={(token, username) => {
          saveToken(token);
          setGate({ state: 'in', token, username });
        }}
      />
    );
  }
  return <LoggedIn token={gate.token} username={gate.username} onLogout={logout} />;
}

function LoggedIn({ token, username, onLogout }: { token: string; username: string; onLogout: (message?: string) => void }) {
  const [cluster, setClusterState] = useState(loadCluster);
  const services = useMemo(() => {
    const api = createApi(token, () => onLogout('The server refused your token (expired or revoked): log in again.'));
    return { api, hub: new Hub(api), access: new AccessCache(api) };
  }, [token]);
  useEffect(() => () => services.hub.stopAll(), [services]);

  const session: Session = {
    ...services,
    username,
    cluster,
    setCluster: (c) => {
      saveCluster(c);
      setClusterState(c);
    },
    logout: () => onLogout(),
  };
  return (
    <SessionContext.Provider value={session}>
      <Shell />
    </SessionContext.Provider>
  );
}
