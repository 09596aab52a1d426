/** What every view of a logged-in session reaches through context. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from '../api/http';
import type { AccessCache } from '../state/access';
import type { Hub } from '../state/live';

export interface Session {
  api: Api;
  hub: Hub;
  access: AccessCache;
  username: string;
  /** The chosen cluster (namespace); undefined for all clusters. */
  cluster: string | undefined;
  setCluster(cluster: string | undefined): void;
  logout(): void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a logged-in session');
  return session;
}
