/**
 * The apiserver's end of one agent's tunnel (api/tunnel.ts): opens streams
 * to the node over the agent's WebSocket and routes frames back to them.
 * Pings find a half-open connection (a machine that vanished) within two
 * intervals, so a request for its node gets a clear 503 instead of hanging.
 */
import { EventEmitter } from 'node:events';
import type WebSocket from 'ws';
import { decodeFrame, encodeFrame, FrameKind, payloadJson, type StreamEnd, type StreamRequest } from '../../api/tunnel.js';
import { STREAM_LIMIT_BYTES } from '../http/watch-budget.js';

const PING_MS = 5_000;

/** One stream through a tunnel, as the apiserver sees it. */
export interface TunnelStream {
  on(event: 'start', fn: (offset: number) => void): this;
  on(event: 'data', fn: (chunk: Buffer) => void): this;
  /** The stream ended: normally (no argument), failed on the agent, or lost with the tunnel (`tunnelLost`). */
  on(event: 'end', fn: (failure: StreamEnd | undefined, tunnelLost: boolean) => void): this;
  /** Sends bytes to the node; false once more than STREAM_LIMIT_BYTES of this stream's are still unsent (stop writing). */
  write(chunk: Buffer): boolean;
  close(): void;
}

class Stream extends EventEmitter implements TunnelStream {
  ended = false;
  /** Bytes written and not yet handed to the network: one stream's backlog, not the tunnel's (shared by all). */
  private unsent = 0;
  constructor(private readonly tunnel: NodeTunnel, readonly id: number) {
    super();
  }
  write(chunk: Buffer): boolean {
    if (this.ended) return true;
    this.unsent += chunk.length;
    this.tunnel.send(FrameKind.Data, this.id, chunk, () => (this.unsent -= chunk.length));
    return this.unsent <= STREAM_LIMIT_BYTES;
  }
  close(): void {
    if (this.ended) return;
    this.tunnel.send(FrameKind.Close, this.id);
    this.finish(undefined, false);
  }
  finish(failure: StreamEnd | undefined, lost: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.tunnel.forget(this.id);
    this.emit('end', failure, lost);
  }
}

/** One agent's open tunnel. */
export class NodeTunnel {
  private readonly streams = new Map<number, Stream>();
  private nextId = 1;
  private readonly closedHandlers: Array<() => void> = [];

  constructor(private readonly socket: WebSocket, readonly node: string) {
    let alive = true;
    const ping = setInterval(() => (alive ? ((alive = false), socket.ping()) : socket.terminate()), PING_MS);
    socket.on('pong', () => (alive = true));
    socket.on('message', (data: Buffer) => this.receive(data));
    socket.on('close', () => {
      clearInterval(ping);
      for (const s of [...this.streams.values()]) s.finish({ status: 503, message: `the tunnel of node ${node} closed (its agent disconnected)` }, true);
      for (const fn of this.closedHandlers) fn();
    });
    socket.on('error', () => socket.terminate());
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  onClosed(fn: () => void): void {
    this.closedHandlers.push(fn);
  }

  /** Opens a stream to the node. */
  openStream(req: StreamRequest): TunnelStream {
    const stream = new Stream(this, this.nextId++);
    this.streams.set(stream.id, stream);
    this.send(FrameKind.Open, stream.id, req);
    return stream;
  }

  /** Ends the tunnel (a newer one of the same node replaced it, or the server stops). */
  close(reason: string): void {
    this.socket.close(1001, reason.slice(0, 120));
  }

  /** Sends a frame; `sent` is called once it is handed to the network, or failed (not when the tunnel is closed). */
  send(kind: FrameKind, id: number, payload?: Buffer | object, sent?: () => void): void {
    if (this.open) this.socket.send(encodeFrame(kind, id, payload), sent);
  }

  forget(id: number): void {
    this.streams.delete(id);
  }

  private receive(data: Buffer): void {
    const frame = decodeFrame(data);
    const stream = frame && this.streams.get(frame.stream);
    if (!frame || !stream) return;
    if (frame.kind === FrameKind.Data) stream.emit('data', frame.payload);
    else if (frame.kind === FrameKind.Start) stream.emit('start', startOffset(frame.payload));
    else if (frame.kind === FrameKind.Close) stream.finish(streamEnd(frame.payload), false);
  }
}

// An agent's frames are input like any other: a bad offset must not reach an HTTP header, nor a bad status
// a WebSocket close code (either would throw here, in the tunnel's message handler, and end the process).

/** The offset of a Start frame's payload; 0 unless a non-negative integer. */
export function startOffset(payload: Buffer): number {
  const offset = payloadJson<{ offset?: unknown }>(payload)?.offset;
  return Number.isSafeInteger(offset) && (offset as number) >= 0 ? (offset as number) : 0;
}

/** The failure of a Close frame's payload (none when empty), its status kept only when an HTTP error status. */
export function streamEnd(payload: Buffer): StreamEnd | undefined {
  const end = payloadJson<{ status?: unknown; message?: unknown }>(payload);
  if (!end) return undefined;
  const status = Number.isInteger(end.status) && (end.status as number) >= 400 && (end.status as number) <= 599 ? (end.status as number) : 502;
  return { status, message: typeof end.message === 'string' ? end.message : 'the agent ended the stream with a malformed failure' };
}
