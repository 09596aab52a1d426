/** The frame of a logged-in session: the sidebar, the top bar and the page of the current route. */
import { useState } from 'preact/hooks';
import type { Route } from '../state/route';
import { CreateButton } from './CreateButton';
import { useRoute } from './hooks';
import { InstanceList } from './InstanceList';
import { NodeList } from './NodeList';
import { Overview } from './Overview';
import { lazy } from './parts/Lazy';
import { Sidebar } from './Sidebar';
import { VolumeList } from './VolumeList';

// The overview and the lists come with the first load; the rest is fetched when first opened.
const InstanceDetail = lazy(() => import('./InstanceDetail').then((m) => m.InstanceDetail));
const NodeDetail = lazy(() => import('./NodeDetail').then((m) => m.NodeDetail));
const VolumeDetail = lazy(() => import('./VolumeDetail').then((m) => m.VolumeDetail));
const FailuresPage = lazy(() => import('./Failures').then((m) => m.FailuresPage));
const CreateDialog = lazy(() => import('./CreateDialog').then((m) => m.CreateDialog));

export function Shell() {
  const route = useRoute();
  const [creating, setCreating] = useState(false);
  return (
    <div class="shell">
      <Sidebar route={route} />
      <div class="main">
        <header class="topbar">
          <Breadcrumbs route={route} />
          <CreateButton onClick={() => setCreating(true)} />
        </header>
        <main class="page">
          <Page route={route} />
        </main>
      </div>
      {creating && <CreateDialog onClose={() => setCreating(false)} />}
    </div>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'overview':
      return <Overview />;
    case 'failures':
      return <FailuresPage />;
    case 'list':
      return route.resource === 'nodes' ? <NodeList /> : route.resource === 'instances' ? <InstanceList /> : <VolumeList />;
    case 'node':
      return <NodeDetail key={`${route.namespace}/${route.name}`} namespace={route.namespace} name={route.name} />;
    case 'instance':
      return <InstanceDetail key={`${route.namespace}/${route.name}`} namespace={route.namespace} name={route.name} tab={route.tab} />;
    case 'volume':
      return <VolumeDetail key={`${route.namespace}/${route.name}`} namespace={route.namespace} name={route.name} />;
    case 'not-found':
      return (
        <div class="card">
          <h2>Not found</h2>
          <p>
            Nothing lives at <code>#{route.path}</code>. <a href="#/">Back to the overview</a>.
          </p>
        </div>
      );
  }
}

const TITLES = { overview: 'Overview', failures: 'Failures', nodes: 'Nodes', instances: 'Instances', volumes: 'Volumes' } as const;

function Breadcrumbs({ route }: { route: Route }) {
  if (route.page === 'overview' || route.page === 'failures') return <h1 class="crumbs">{TITLES[route.page]}</h1>;
  if (route.page === 'list') return <h1 class="crumbs">{TITLES[route.resource]}</h1>;
  if (route.page === 'not-found') return <h1 class="crumbs">Not found</h1>;
  const list = route.page === 'node' ? 'nodes' : route.page === 'instance' ? 'instances' : 'volumes';
  return (
    <h1 class="crumbs">
      <a href={`#/${list}`}>{TITLES[list]}</a>
      <span class="sep">/</span>
      <span class="muted">{route.namespace}</span>
      <span class="sep">/</span>
      {route.name}
    </h1>
  );
}
