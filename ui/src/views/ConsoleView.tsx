/**
 * The serial console of a VM, in the browser. Only qemu instances have one;
 * for a process the tab explains why not. The terminal code is fetched the
 * first time a console opens.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Instance } from '../../../api/instance';
import { consoleProtocols } from '../api/console-protocol';
import { errorText } from '../api/http';
import { consoleUrl } from '../api/paths';
import { consoleBlocker } from '../state/action-rules';
import { availability, cairnQuestion } from '../state/permissions';
import { detailHref } from '../state/route';
import { useAccess } from './hooks';
import { Card } from './parts/Card';
import { useSession } from './session';
import type { ConsoleState } from './terminal';

export function ConsoleView({ instance }: { instance: Instance }) {
  const ns = instance.metadata.namespace ?? '';
  const name = instance.metadata.name ?? '';
  const question = cairnQuestion('create', 'instances', ns, 'console');
  const allowed = useAccess(question);
  const { disabled, title } = availability(allowed, question, 'Open the serial console', consoleBlocker(instance));
  if (allowed === undefined) return <Card title="Serial console"><p class="muted">{title}</p></Card>;
  if (disabled) {
    return (
      <Card title="Serial console">
        <p class="banner banner-info" data-testid="console-unavailable">
          {title} {instance.spec.driver !== 'qemu' && <a href={detailHref('instances', ns, name, 'logs')}>Open the log</a>}
        </p>
      </Card>
    );
  }
  return <Terminal namespace={ns} name={name} />;
}

function Terminal({ namespace, name }: { namespace: string; name: string }) {
  const { api } = useSession();
  const container = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<ConsoleState>({ state: 'connecting' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let disposed = false;
    let dispose = () => {
      disposed = true;
    };
    import('./terminal').then(
      ({ openConsole }) => {
        if (disposed || !container.current) return;
        const session = openConsole(container.current, consoleUrl(window.location, namespace, name), consoleProtocols(api.token), setState);
        dispose = () => session.dispose();
      },
      (err) => setState({ state: 'closed', reason: `the terminal could not be loaded: ${errorText(err)}` }),
    );
    return () => dispose();
  }, [api, namespace, name, attempt]);

  return (
    <Card
      title="Serial console"
      actions={
        <>
          <span class={`stream stream-${state.state}`} data-testid="console-state">
            {state.state === 'open' ? 'Connected' : state.state === 'connecting' ? 'Connecting…' : 'Closed'}
          </span>
          {state.state === 'closed' && (
            <button type="button" data-testid="console-reconnect" onClick={() => setAttempt(attempt + 1)}>
              Reconnect
            </button>
          )}
        </>
      }
    >
      {state.state === 'closed' && (
        <p class="banner banner-error" role="alert" data-testid="console-closed">
          Console closed: {state.reason}
        </p>
      )}
      <div class="console" data-testid="console" data-state={state.state}>
        <div class="console-screen" ref={container} key={attempt} />
      </div>
    </Card>
  );
}
