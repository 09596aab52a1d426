/** Hooks that connect components to the live store, the access cache and the router. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Instance } from '../../../api/instance';
import type { KubeObject, Resource } from '../api/paths';
import { emptyCollection } from '../state/store';
import { type LiveSnapshot, type Source, sourceKey } from '../state/live';
import type { AccessQuestion } from '../state/permissions';
import { questionKey } from '../state/permissions';
import { parseRoute, type Route } from '../state/route';
import { useSession } from './session';

const CONNECTING: LiveSnapshot<never> = { collection: emptyCollection(), connection: { state: 'connecting' } };

/** The live snapshot of a watched collection; re-renders on every applied batch of changes. */
export function useLive<T extends KubeObject>(source: Source | undefined): LiveSnapshot<T> {
  const { hub } = useSession();
  const key = source ? sourceKey(source) : '';
  const [state, setState] = useState<{ key: string; snapshot: LiveSnapshot<T> }>(() => ({ key, snapshot: (source && hub.peek<T>(source)) ?? CONNECTING }));
  useEffect(() => {
    if (!source) return undefined;
    const live = hub.acquire<T>(source);
    setState({ key, snapshot: live.snapshot });
    const off = live.subscribe((snapshot) => setState({ key, snapshot }));
    return () => {
      off();
      hub.release(live as never);
    };
  }, [hub, key]); // `key` stands for `source`, whose identity changes every render
  if (state.key === key) return state.snapshot;
  return (source && hub.peek<T>(source)) ?? CONNECTING;
}

/** The collection to read one cluster's objects from: the chosen scope when it holds them, else that cluster. */
export function useScopeFor(namespace: string): string | undefined {
  const { cluster } = useSession();
  return cluster === undefined || cluster === namespace ? cluster : namespace;
}

/** One object, live, from the collection covering its cluster. */
export function useLiveObject<T extends KubeObject>(resource: Resource, namespace: string, name: string): { object: T | undefined; snapshot: LiveSnapshot<T> } {
  const scope = useScopeFor(namespace);
  const snapshot = useLive<T>({ resource, namespace: scope });
  return { object: snapshot.collection.items.get(`${namespace}/${name}`), snapshot };
}

/** A function that waits until the live copy of an instance satisfies a condition (for multi-step actions). */
export function useInstanceWaiter(namespace: string, name: string): (ready: (i: Instance | undefined) => boolean, what: string) => Promise<void> {
  const { hub } = useSession();
  const scope = useScopeFor(namespace);
  return useMemo(
    () => async (ready, what) => {
      const live = hub.acquire<Instance>({ resource: 'instances', namespace: scope });
      try {
        await live.waitFor(`${namespace}/${name}`, ready, what);
      } finally {
        hub.release(live as never);
      }
    },
    [hub, scope, namespace, name],
  );
}

/** The answer to an access review: undefined while it is asked. */
export function useAccess(question: AccessQuestion): boolean | undefined {
  const { access } = useSession();
  const key = questionKey(question);
  const [answer, setAnswer] = useState<{ key: string; allowed: boolean | undefined }>({ key, allowed: access.answer(question) });
  useEffect(() => {
    let current = true;
    void access.ask(question).then((allowed) => current && setAnswer({ key, allowed }));
    return () => {
      current = false;
    };
  }, [access, key]); // `key` stands for `question`
  return answer.key === key ? answer.allowed : access.answer(question);
}

/** The route of the current location hash. */
export function useRoute(): Route {
  const [hash, setHash] = useState(() => window.location.hash);
  useEffect(() => {
    const onChange = () => setHash(window.location.hash);
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return useMemo(() => parseRoute(hash), [hash]);
}

/** The current time, refreshed every `intervalMs` (for ages). */
export function useNow(intervalMs = 10_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [intervalMs]);
  return now;
}
