/**
 * The serial console terminal: xterm.js wired to the console WebSocket.
 * Loaded on demand (dynamic import) so xterm stays out of the first load.
 * Bytes go both ways as binary frames: console output into the terminal,
 * keystrokes (UTF-8) to the VM.
 */
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { closeExplanation } from '../api/console-protocol';

export type ConsoleState = { state: 'connecting' } | { state: 'open' } | { state: 'closed'; reason: string };

export interface ConsoleSession {
  dispose(): void;
}

export function openConsole(container: HTMLElement, url: string, protocols: string[], onState: (s: ConsoleState) => void): ConsoleSession {
  const term = new Terminal({
    cursorBlink: true,
    fontSize: 13,
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    scrollback: 5000,
    theme: { background: '#0f172a', foreground: '#e2e8f0' },
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(container);
  fit.fit();

  const socket = new WebSocket(url, protocols);
  socket.binaryType = 'arraybuffer';
  onState({ state: 'connecting' });
  socket.onopen = () => {
    onState({ state: 'open' });
    term.focus();
  };
  socket.onmessage = (e: MessageEvent<ArrayBuffer | string>) => term.write(typeof e.data === 'string' ? e.data : new Uint8Array(e.data));
  socket.onclose = (e) => {
    const reason = closeExplanation(e.code, e.reason);
    onState({ state: 'closed', reason });
    term.write(`\r\n\x1b[2m[console closed: ${reason}]\x1b[0m\r\n`);
  };

  const encoder = new TextEncoder();
  const send = (bytes: Uint8Array) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(bytes);
  };
  const typed = term.onData((text) => send(encoder.encode(text)));
  // Some keys (e.g. mouse reports in legacy mode) arrive as byte strings, one char per byte.
  const binary = term.onBinary((bytes) => send(Uint8Array.from(bytes, (c) => c.charCodeAt(0) & 0xff)));
  const resize = new ResizeObserver(() => fit.fit());
  resize.observe(container);

  return {
    dispose() {
      resize.disconnect();
      typed.dispose();
      binary.dispose();
      socket.onclose = null;
      socket.close();
      term.dispose();
    },
  };
}
