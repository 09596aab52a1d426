/**
 * Streams an instance's console.log for a log request: the range
 * log-window.ts picks, the last N lines of it, and with follow whatever is
 * appended afterwards — across copy-truncate rotation — until the request
 * is cancelled or the instance's directory goes away.
 */
import fs from 'node:fs';
import type { LogOptions } from '../../api/tunnel.js';
import { logRange, tailIndex, type LogFacts, type LogRange } from './log-window.js';

const CHUNK_BYTES = 64 * 1024;
/** How often a follow looks for new output when no file event came (a safety net under fs.watch). */
const FOLLOW_POLL_MS = 250;

/** Where a log stream's bytes go. */
export interface LogSink {
  /** The offset of the first byte sent (for resuming after a reconnect). */
  start(offset: number): void;
  /** Sends bytes; resolves once they are handed to the connection. */
  data(chunk: Buffer): Promise<void>;
}

/** An error a user should see as is: nothing to read, with the HTTP status to answer. */
export class LogUnavailable extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Sends the log to `sink`; resolves when done (or cancelled through `signal`). */
export async function streamLog(file: string, opts: LogOptions, facts: Omit<LogFacts, 'size'>, sink: LogSink, signal: AbortSignal): Promise<void> {
  const handle = await fs.promises.open(file, 'r').catch(() => {
    throw new LogUnavailable(404, 'the instance has written no output on this node yet');
  });
  try {
    const range = logRange(opts, { ...facts, size: (await handle.stat()).size });
    if ('problem' in range) throw new LogUnavailable(400, range.problem);
    let pos = opts.tailLines !== undefined && opts.fromOffset === undefined ? await tailStart(handle, range, opts.tailLines) : range.start;
    sink.start(pos);
    pos = await copy(handle, pos, range.end, sink, signal);
    if (opts.follow && range.end === undefined) await follow(file, handle, pos, sink, signal);
  } finally {
    await handle.close();
  }
}

/** The offset where the last `lines` lines of the range begin, reading backwards a chunk at a time. */
async function tailStart(handle: fs.promises.FileHandle, range: LogRange, lines: number): Promise<number> {
  const end = range.end ?? (await handle.stat()).size;
  for (let size = CHUNK_BYTES; ; size *= 4) {
    const from = Math.max(range.start, end - size);
    const buf = Buffer.alloc(end - from);
    await handle.read(buf, 0, buf.length, from);
    const t = tailIndex(buf, lines);
    if (t.complete || from === range.start) return from + t.index;
  }
}

/** Copies [pos, end) to the sink (to the current end when `end` is undefined); returns where it stopped. */
async function copy(handle: fs.promises.FileHandle, pos: number, end: number | undefined, sink: LogSink, signal: AbortSignal): Promise<number> {
  const buf = Buffer.alloc(CHUNK_BYTES);
  while (!signal.aborted) {
    const want = end === undefined ? CHUNK_BYTES : Math.min(CHUNK_BYTES, end - pos);
    if (want <= 0) break;
    const { bytesRead } = await handle.read(buf, 0, want, pos);
    if (bytesRead === 0) break;
    await sink.data(Buffer.from(buf.subarray(0, bytesRead)));
    pos += bytesRead;
  }
  return pos;
}

/** Sends what is appended from `pos` on, until cancelled or the file's directory is gone. */
async function follow(file: string, handle: fs.promises.FileHandle, pos: number, sink: LogSink, signal: AbortSignal): Promise<void> {
  let wake: () => void = () => undefined;
  const watcher = fs.watch(file, { persistent: false }, () => wake());
  watcher.on('error', () => undefined);
  const onAbort = () => wake();
  signal.addEventListener('abort', onAbort);
  try {
    while (!signal.aborted) {
      const stat = await handle.stat();
      if (stat.size < pos) pos = 0; // copy-truncate rotation: the file starts over
      if (stat.size > pos) {
        pos = await copy(handle, pos, undefined, sink, signal);
        continue;
      }
      if (!fs.existsSync(file)) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FOLLOW_POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    watcher.close();
  }
}
