/**
 * The agent's end of its tunnel (api/tunnel.ts): one outbound WebSocket to
 * the apiserver, reopened with backoff whenever it drops, carrying the log
 * and console streams the apiserver opens. The control plane never dials
 * the node; a stream exists only while this connection does.
 */
import type https from 'node:https';
import WebSocket from 'ws';
import type { Logger } from 'winston';
import { decodeFrame, encodeFrame, FrameKind, payloadJson, TUNNEL_PROTOCOL, type StreamEnd, type StreamRequest } from '../../api/tunnel.js';
import type { PooledKubeConfig } from '../../api/client/kubeconfig.js';
import { GROUP, PLURALS, VERSION } from '../../api/types.js';
import type { WorkItem } from '../../api/workitem.js';
import { instanceDir } from '../drivers/paths.js';
import { LOG_FILE } from '../drivers/process/state.js';
import { addMark, type LogMark } from './log-window.js';
import { serveStream, type StreamPeer } from './streams.js';
import fs from 'node:fs';
import path from 'node:path';
import { guardedInterval } from '../../runtime/guarded-interval.js';

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;
/** A tunnel up this long was not refused: its close starts the backoff afresh. */
const STABLE_MS = 10_000;
/** A connection that answers no ping for this long is dead (a half-open TCP connection). */
const PING_MS = 5_000;
/** How often log sizes are sampled for sinceSeconds, and how many samples an instance keeps (an hour's worth). */
const MARK_INTERVAL_MS = 2_000;
const MARKS_KEPT = 1_800;

/** Settings of the tunnel. */
export interface TunnelClientOptions {
  kubeConfig: PooledKubeConfig;
  cluster: string;
  nodeName: string;
  dataDir: string;
  /** The WorkItems of this node (their instances' logs are sampled). */
  items(): WorkItem[];
  log: Logger;
}

/** Keeps the tunnel open until stopped. */
export class TunnelClient {
  private socket: WebSocket | undefined;
  private stopped = false;
  private delay = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | undefined;
  private readonly marks = new Map<string, LogMark[]>();
  private readonly markTimer: NodeJS.Timeout;
  private readonly streams = new Map<number, { abort: AbortController; data?: (b: Buffer) => void }>();

  constructor(private readonly o: TunnelClientOptions) {
    this.markTimer = guardedInterval(() => this.sampleLogSizes(), MARK_INTERVAL_MS, (err) => this.o.log.warn('sampling instance log sizes failed', { error: String(err) }));
  }

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.markTimer);
    clearTimeout(this.timer);
    this.socket?.terminate();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let socket: WebSocket;
    try {
      const opts: https.RequestOptions = {};
      // Each attempt takes the credential as it is now: the agent rotates its token.
      await this.o.kubeConfig.applyToHTTPSOptions(opts as never);
      delete opts.agent;
      socket = new WebSocket(this.url(), [TUNNEL_PROTOCOL], { ...opts, perMessageDeflate: false, handshakeTimeout: 10_000 } as WebSocket.ClientOptions);
    } catch (err) {
      this.o.log.warn('cannot open the tunnel', { error: String(err) });
      return this.retry();
    }
    this.socket = socket;
    // Pings start once open: ws throws on a ping while the handshake is still on (it was an uncaught
    // exception that ended the agent when a partition held the handshake past PING_MS); until then
    // handshakeTimeout bounds the wait.
    let ping: NodeJS.Timeout | undefined;
    let openedAt: number | undefined;
    socket.on('open', () => {
      openedAt = Date.now();
      this.o.log.info('tunnel open', { node: this.o.nodeName });
      let alive = true;
      socket.on('pong', () => (alive = true));
      ping = setInterval(() => (alive ? ((alive = false), socket.ping()) : socket.terminate()), PING_MS);
    });
    socket.on('unexpected-response', (_req, res) => {
      this.o.log.warn('the apiserver refused the tunnel', { status: res.statusCode, message: res.statusMessage });
      socket.terminate();
    });
    socket.on('message', (data: Buffer) => this.receive(socket, data));
    socket.on('error', (err) => this.o.log.debug?.('tunnel error', { error: String(err) }));
    socket.on('close', () => {
      clearInterval(ping);
      // Back off afresh only after a tunnel that stayed up: one closed at once (another agent with this
      // node's name taking it over, a server that keeps refusing) would otherwise reconnect every 500 ms.
      if (openedAt !== undefined && Date.now() - openedAt >= STABLE_MS) this.delay = RECONNECT_MIN_MS;
      for (const s of this.streams.values()) s.abort.abort();
      this.streams.clear();
      if (!this.stopped) this.o.log.info('tunnel closed; reopening', { inMs: this.delay });
      this.retry();
    });
  }

  private retry(): void {
    if (this.stopped) return;
    // Jittered, so the agents of an apiserver that restarted do not all come back at the same instants.
    this.timer = setTimeout(() => void this.connect(), this.delay * (0.5 + Math.random()));
    this.delay = Math.min(this.delay * 2, RECONNECT_MAX_MS);
  }

  private url(): string {
    const server = this.o.kubeConfig.getCurrentCluster()?.server ?? '';
    const base = server.replace(/^http/, 'ws').replace(/\/+$/, '');
    return `${base}/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(this.o.cluster)}/${PLURALS.Node}/${encodeURIComponent(this.o.nodeName)}/tunnel`;
  }

  private receive(socket: WebSocket, data: Buffer): void {
    const frame = decodeFrame(data);
    if (!frame) return;
    const stream = this.streams.get(frame.stream);
    if (frame.kind === FrameKind.Data) stream?.data?.(frame.payload);
    else if (frame.kind === FrameKind.Close) stream?.abort.abort();
    else if (frame.kind === FrameKind.Open && !stream) {
      const req = payloadJson<StreamRequest>(frame.payload);
      if (req) this.open(socket, frame.stream, req);
      else socket.send(encodeFrame(FrameKind.Close, frame.stream, { status: 400, message: 'the stream request is not JSON' }));
    }
  }

  private open(socket: WebSocket, id: number, req: StreamRequest): void {
    const abort = new AbortController();
    const entry: { abort: AbortController; data?: (b: Buffer) => void } = { abort };
    this.streams.set(id, entry);
    let ended = false;
    const peer: StreamPeer = {
      signal: abort.signal,
      start: (offset) => socket.send(encodeFrame(FrameKind.Start, id, { offset })),
      send: (chunk) => new Promise((resolve) => (abort.signal.aborted ? resolve() : socket.send(encodeFrame(FrameKind.Data, id, chunk), () => resolve()))),
      end: (failure?: StreamEnd) => {
        if (ended) return;
        ended = true;
        // Only this stream's entry: one of a closed tunnel that ends late must not take the place of a
        // stream of the next tunnel, which numbers its streams from 1 again.
        if (this.streams.get(id) === entry) this.streams.delete(id);
        if (socket.readyState === WebSocket.OPEN) socket.send(encodeFrame(FrameKind.Close, id, failure));
      },
      onData: (fn) => (entry.data = fn),
    };
    const ctx = { dataDir: this.o.dataDir, nodeName: this.o.nodeName, marksOf: (dir: string) => this.marks.get(dir) ?? [], now: () => Date.now() };
    void serveStream(req, peer, ctx);
  }

  /** Records each local instance log's size now and then, so a log request can start sinceSeconds ago. */
  private sampleLogSizes(): void {
    const now = Date.now();
    const seen = new Set<string>();
    for (const w of this.o.items()) {
      if (w.spec.type !== 'InstanceRuntime' || !w.metadata.namespace) continue;
      const dir = instanceDir(this.o.dataDir, w.metadata.namespace, w.spec.owner.name);
      seen.add(dir);
      const size = fs.statSync(path.join(dir, LOG_FILE), { throwIfNoEntry: false })?.size;
      if (size === undefined) continue;
      const marks = this.marks.get(dir) ?? [];
      addMark(marks, { at: now, size }, MARKS_KEPT);
      this.marks.set(dir, marks);
    }
    for (const dir of this.marks.keys()) if (!seen.has(dir)) this.marks.delete(dir);
  }
}
