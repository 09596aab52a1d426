/**
 * The agent's tunnel: one WebSocket the agent opens to the apiserver
 * (`.../namespaces/<cluster>/nodes/<node>/tunnel`), over which the
 * apiserver opens streams to the node — an instance's log, a VM's serial
 * console — without ever dialling the node (docs/observability.md).
 *
 * Every WebSocket message is one binary frame: a kind byte, the stream id
 * (uint32, big-endian; chosen by the apiserver) and a payload.
 *   - Open (apiserver → agent): JSON StreamRequest.
 *   - Data (both ways): raw bytes (log output, console output, keystrokes).
 *   - Start (agent → apiserver, logs only): JSON {offset}, the file offset
 *     the first Data byte comes from, so a follow can resume there after
 *     the tunnel reconnects.
 *   - Close (both ways): an empty payload for a normal end, or a JSON
 *     StreamEnd saying why it failed.
 */

/** The kinds of frame. */
export const FrameKind = { Open: 1, Data: 2, Close: 3, Start: 4 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/** The subprotocol both sides of a tunnel speak. */
export const TUNNEL_PROTOCOL = 'tunnel.cairn.dev';
/** The subprotocol of a console session between a client and the apiserver (raw bytes both ways). */
export const CONSOLE_PROTOCOL = 'console.cairn.dev';
/**
 * The largest WebSocket message the API server takes from a console or a tunnel (ws's default is
 * 100 MiB, held whole before it is passed on); agents send logs in 64 KiB chunks.
 */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** What to read from an instance's log (the options of pods/log). */
export interface LogOptions {
  follow?: boolean;
  /** The last N lines only. */
  tailLines?: number;
  /** Only output written in the last N seconds (to the agent's sampling granularity). */
  sinceSeconds?: number;
  /** The output of the runs before the current one. */
  previous?: boolean;
  /** Resume at this byte offset of the log file (after the tunnel reconnected); overrides tail and since. */
  fromOffset?: number;
}

/** A stream the apiserver asks the agent for. */
export interface StreamRequest {
  kind: 'log' | 'console';
  namespace: string;
  name: string;
  log?: LogOptions;
}

/** Why a stream ended abnormally: an HTTP status and a message for the user. */
export interface StreamEnd {
  status: number;
  message: string;
}

/** One decoded frame. */
export interface Frame {
  kind: FrameKind;
  stream: number;
  payload: Buffer;
}

const HEADER_BYTES = 5;

/** Encodes a frame; a payload object is sent as JSON. */
export function encodeFrame(kind: FrameKind, stream: number, payload?: Buffer | object): Buffer {
  const body = payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt8(kind, 0);
  frame.writeUInt32BE(stream, 1);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

/** Decodes a frame, or undefined for one that is too short or of an unknown kind. */
export function decodeFrame(data: Buffer): Frame | undefined {
  if (data.length < HEADER_BYTES) return undefined;
  const kind = data.readUInt8(0);
  if (!Object.values(FrameKind).includes(kind as FrameKind)) return undefined;
  return { kind: kind as FrameKind, stream: data.readUInt32BE(1), payload: data.subarray(HEADER_BYTES) };
}

/** The JSON of a payload, or undefined when it is not an object. */
export function payloadJson<T>(payload: Buffer): T | undefined {
  if (payload.length === 0) return undefined;
  try {
    const v = JSON.parse(payload.toString('utf8')) as unknown;
    return v && typeof v === 'object' ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}
