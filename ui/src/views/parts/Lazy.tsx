/**
 * A component whose code is fetched the first time it renders, so pages
 * the user may never open stay out of the first load. (preact/compat's
 * lazy and Suspense would pull in the whole compat layer.) A chunk that
 * fails to load usually means the dashboard was upgraded under an open
 * page: its hashed file names changed, and a reload fetches the new ones.
 */
import { type ComponentType, type FunctionComponent, h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../../api/http';

export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): FunctionComponent<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  return function Lazy(props: P) {
    const [, setLoaded] = useState(!!loaded);
    const [error, setError] = useState<string>();
    useEffect(() => {
      if (loaded) return;
      loading ??= load();
      loading.then(
        (component) => {
          loaded = component;
          setLoaded(true);
        },
        (err) => {
          loading = undefined; // let a later render try again
          setError(errorText(err));
        },
      );
    }, []);
    if (error) return <p class="banner banner-error">This part of the dashboard could not be loaded ({error}). Reload the page.</p>;
    return loaded ? h(loaded, props) : <p class="muted">Loading…</p>;
  };
}
