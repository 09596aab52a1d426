/**
 * `cairn console instance NAME`: a VM's serial console in the terminal. The
 * terminal goes raw (every key reaches the VM, Ctrl-C included); Ctrl-]
 * leaves. Not a terminal (a script piping into it): the session ends at
 * the end of its input.
 */
import WebSocket from 'ws';
import { CONSOLE_PROTOCOL } from '../../api/tunnel.js';
import type { ClientContext } from '../client/context.js';
import { CliError } from '../client/errors.js';
import { refusal } from '../../api/client/http-exchange.js';
import { oneInstance } from '../client/kind-args.js';

/** Ctrl-]: telnet's and virsh's escape. */
const ESCAPE = 0x1d;

/** Runs `cairn console ARGS...`. */
export async function openConsole(ctx: ClientContext, args: string[]): Promise<number> {
  const { name } = oneInstance(await ctx.catalog(), args, 'console', 'cairn console instance NAME');
  const conn = await ctx.rest.rawConnection();
  const path = `/apis/cairn.dev/v1alpha1/namespaces/${encodeURIComponent(ctx.namespace)}/instances/${encodeURIComponent(name)}/console`;
  const ws = new WebSocket(conn.server.replace(/^http/, 'ws').replace(/\/+$/, '') + path, [CONSOLE_PROTOCOL], { ...conn.tls, headers: conn.headers, perMessageDeflate: false });
  await opened(ws);
  const tty = process.stdin.isTTY;
  if (tty) process.stderr.write(`connected to the console of instance ${ctx.namespace}/${name}; press Ctrl-] to leave\r\n`);
  const restore = attachTerminal(ws);
  try {
    return await closed(ws);
  } finally {
    restore();
    if (tty) process.stderr.write('\r\nconsole closed\n');
  }
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => void refusal(res).then(reject));
    ws.once('error', (err) => reject(new CliError(`cannot open the console: ${err.message}`)));
  });
}

/** Resolves with the exit code once the session ends: 0 when it ended normally, 1 with the reason otherwise. */
function closed(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    ws.on('close', (code, reason) => {
      if (code === 1000 || code === 1005) return resolve(0);
      process.stderr.write(`\r\nthe console ended: ${reason.toString() || `close code ${code}`}\n`);
      resolve(1);
    });
  });
}

/** Wires stdin and stdout to the socket; returns the function that puts the terminal back. */
function attachTerminal(ws: WebSocket): () => void {
  const stdin = process.stdin;
  if (stdin.isTTY) stdin.setRawMode(true);
  const onInput = (chunk: Buffer) => {
    const escape = chunk.indexOf(ESCAPE);
    if (escape >= 0) {
      if (escape > 0) ws.send(chunk.subarray(0, escape));
      return ws.close(1000, 'the user left');
    }
    ws.send(chunk);
  };
  const onEnd = () => ws.close(1000, 'end of input');
  stdin.on('data', onInput);
  stdin.on('end', onEnd);
  stdin.resume();
  ws.on('message', (data: Buffer) => process.stdout.write(data));
  return () => {
    stdin.off('data', onInput);
    stdin.off('end', onEnd);
    if (stdin.isTTY) stdin.setRawMode(false);
    stdin.pause();
  };
}
