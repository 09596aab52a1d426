/**
 * An instance's log, followed: the last 200 lines, then every line as the
 * server streams it (chunked text/plain). The view sticks to the bottom
 * while the reader is there, and leaves the scroll alone when they scrolled up.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { errorText } from '../api/http';
import { instanceLogPath } from '../api/paths';
import { appendLog } from '../state/log-buffer';
import { cairnQuestion } from '../state/permissions';
import { useAccess } from './hooks';
import { Card } from './parts/Card';
import { useSession } from './session';

type StreamState = { state: 'connecting' } | { state: 'following' } | { state: 'ended' } | { state: 'paused' } | { state: 'failed'; error: string };

export function LogView({ namespace, name }: { namespace: string; name: string }) {
  const { api, hub } = useSession();
  const allowed = useAccess(cairnQuestion('get', 'instances', namespace, 'log'));
  const [follow, setFollow] = useState(true);
  const [attempt, setAttempt] = useState(0);
  const [text, setText] = useState('');
  const [stream, setStream] = useState<StreamState>({ state: 'connecting' });
  const output = useRef<HTMLPreElement>(null);
  const atBottom = useRef(true);

  useEffect(() => {
    if (!follow) {
      setStream({ state: 'paused' });
      return undefined;
    }
    const control = new AbortController();
    hub.makeRoom(1); // the log holds a connection open, like a watch
    setText(''); // the stream starts again with the last lines: replace, do not duplicate
    setStream({ state: 'connecting' });
    void (async () => {
      try {
        const res = await api.stream(instanceLogPath(namespace, name), control.signal);
        setStream({ state: 'following' });
        const reader = res.body?.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const chunk = await reader?.read();
          if (!chunk || chunk.done) break;
          const piece = decoder.decode(chunk.value, { stream: true });
          setText((t) => appendLog(t, piece));
        }
        setStream({ state: 'ended' });
      } catch (err) {
        if (!control.signal.aborted) setStream({ state: 'failed', error: errorText(err) });
      }
    })();
    return () => control.abort();
  }, [api, hub, namespace, name, follow, attempt]);

  useLayoutEffect(() => {
    const el = output.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [text]);

  return (
    <Card
      title="Log"
      actions={
        <>
          <StreamStatus stream={stream} />
          <label class="toggle">
            <input type="checkbox" data-testid="log-follow" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} /> Follow
          </label>
          {(stream.state === 'ended' || stream.state === 'failed') && follow && (
            <button type="button" onClick={() => setAttempt(attempt + 1)} data-testid="log-reconnect">
              Reconnect
            </button>
          )}
        </>
      }
    >
      {allowed === false && <p class="banner banner-error">You are not allowed to read logs of instances in cluster {namespace}.</p>}
      {stream.state === 'failed' && (
        <p class="banner banner-error" role="alert" data-testid="log-error">
          {stream.error}
        </p>
      )}
      <pre
        class="log"
        ref={output}
        data-testid="log-output"
        data-state={stream.state}
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {text}
      </pre>
    </Card>
  );
}

function StreamStatus({ stream }: { stream: StreamState }) {
  const words = { connecting: 'Connecting…', following: 'Following', ended: 'Stream ended', paused: 'Paused', failed: 'Failed' } as const;
  return <span class={`stream stream-${stream.state}`}>{words[stream.state]}</span>;
}
