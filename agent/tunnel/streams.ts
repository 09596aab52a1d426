/**
 * What the agent serves through its tunnel: an instance's log and a VM's
 * serial console, read from the instance's directory on this node.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { StreamEnd, StreamRequest } from '../../api/tunnel.js';
import { instanceDir } from '../drivers/paths.js';
import { lastRotated } from '../drivers/process/log-rotation.js';
import { LOG_FILE, readState, type ProcessState } from '../drivers/process/state.js';
import { CONSOLE_SOCKET } from '../drivers/qemu/command.js';
import { streamLog, LogUnavailable } from './log-stream.js';
import type { LogMark } from './log-window.js';

/**
 * Console input the guest has not taken yet, at most: a paused or hung guest (or a flood) ends the session
 * rather than growing the agent's memory without bound.
 */
export const CONSOLE_INPUT_BACKLOG_BYTES = 1024 * 1024;

/** One open stream, as its handler sees it. */
export interface StreamPeer {
  start(offset: number): void;
  send(chunk: Buffer): Promise<void>;
  /** Ends the stream, with why when it failed. */
  end(failure?: StreamEnd): void;
  /** Bytes the other side sent (console keystrokes). */
  onData(fn: (chunk: Buffer) => void): void;
  readonly signal: AbortSignal;
}

/** What a stream needs from the agent. */
export interface StreamContext {
  dataDir: string;
  nodeName: string;
  marksOf(dir: string): readonly LogMark[];
  now(): number;
}

/** Serves one stream request until it ends. */
export async function serveStream(req: StreamRequest, peer: StreamPeer, ctx: StreamContext): Promise<void> {
  const dir = instanceDir(ctx.dataDir, req.namespace, req.name);
  const where = `instance ${req.namespace}/${req.name} on node ${ctx.nodeName}`;
  try {
    const state = readState(dir);
    if (!state && !fs.existsSync(path.join(dir, LOG_FILE))) return peer.end({ status: 404, message: `${where} has no files here: it never ran on this node, or was removed` });
    if (req.kind === 'log') await serveLog(dir, state, req, peer, ctx);
    else return await serveConsole(dir, state, where, peer);
    peer.end();
  } catch (err) {
    peer.end(err instanceof LogUnavailable ? { status: err.status, message: `${where}: ${err.message}` } : { status: 500, message: `reading ${where} failed: ${String(err)}` });
  }
}

function serveLog(dir: string, state: ProcessState | undefined, req: StreamRequest, peer: StreamPeer, ctx: StreamContext): Promise<void> {
  // Rotated since the run started, the file holds only this run's output: its recorded offset is gone
  // (the file may have grown past it again).
  const rotatedAt = lastRotated(path.join(dir, LOG_FILE));
  const rotated = (rotatedAt ?? 0) >= (state?.startedAt ?? Infinity);
  const runStart = rotated ? 0 : (state?.logOffset ?? state?.vm?.logOffset ?? 0);
  const sink = { start: (offset: number) => peer.start(offset), data: (chunk: Buffer) => peer.send(chunk) };
  return streamLog(path.join(dir, LOG_FILE), req.log ?? {}, { runStart, marks: ctx.marksOf(dir), rotatedAt, now: ctx.now() }, sink, peer.signal);
}

/** Joins the stream to the VM's serial console socket (qemu serves it; its output is logged to console.log too). */
function serveConsole(dir: string, state: ProcessState | undefined, where: string, peer: StreamPeer): Promise<void> {
  if (state && !state.vm) return Promise.resolve(peer.end({ status: 400, message: `${where} is a process instance, which has no console; read its output with cairn logs` }));
  return new Promise((resolve) => {
    const socket = net.connect(path.join(dir, CONSOLE_SOCKET));
    const finish = (failure?: StreamEnd) => {
      socket.destroy();
      peer.end(failure);
      resolve();
    };
    socket.on('data', (chunk: Buffer) => {
      socket.pause();
      void peer.send(chunk).finally(() => socket.resume());
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish({ status: 503, message: consoleProblem(where, err) }));
    socket.on('close', () => finish());
    peer.onData((chunk) => {
      socket.write(chunk);
      if (socket.writableLength <= CONSOLE_INPUT_BACKLOG_BYTES) return;
      // The fact first: a WebSocket close reason keeps 123 bytes.
      const message = `the guest reads no console input (${Math.round(socket.writableLength / 1024)} KiB waiting); session ended. Is ${where} paused or hung?`;
      finish({ status: 429, message });
    });
    peer.signal.addEventListener('abort', () => finish());
  });
}

function consoleProblem(where: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') return `${where} is not running (its serial console is closed); start it and try again`;
  return `the serial console of ${where} failed: ${err.message}`;
}
