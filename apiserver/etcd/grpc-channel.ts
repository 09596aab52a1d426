/**
 * Unary gRPC calls to one etcd member over node:http2, for the write path.
 *
 * A gRPC unary call is one HTTP/2 POST: the request message in a 5-byte
 * frame (compression flag, length), the answer's message likewise, and the
 * outcome in the `grpc-status` trailer (or in the headers of an answer that
 * is only an error). grpc-js adds a channel, a load balancer, a filter stack
 * and per-call metadata on top; for one small Txn that machinery is most of
 * the client's CPU (hack/bench numbers in docs/throughput.md), which is why
 * writes take this path and everything else stays with etcd3.
 *
 * Failures become etcd3's own error types (castGrpcError), with grpc-js's
 * message form ("14 UNAVAILABLE: ..."), so fault handling, the 503 mapping
 * and NOSPACE detection treat both clients alike.
 */
import http2 from 'node:http2';
import { castGrpcError } from 'etcd3';

/** The TLS material of the etcd client (client-tls.ts). */
export interface ChannelTls {
  rootCertificate: Buffer;
  certChain?: Buffer;
  privateKey?: Buffer;
}

const CODE_NAMES = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED'];
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
const INTERNAL = 13;

// Flow-control windows big enough that an answer carrying a 1.5 MiB object needs no window updates.
const WINDOW_BYTES = 16 * 1024 * 1024;

/** A gRPC failure as etcd3 types it. */
export function grpcError(code: number, details: string): Error {
  return castGrpcError(Object.assign(new Error(`${code} ${CODE_NAMES[code] ?? 'UNKNOWN'}: ${details}`), { code }));
}

/**
 * etcd's answers that leave a write's outcome open: a proposal that timed out, whose leader changed, or whose
 * server stopped may still commit; so may one cut short on etcd's side (CANCELLED, UNKNOWN, DEADLINE_EXCEEDED).
 */
const AMBIGUOUS_ETCD_ERRORS = /request timed out|leader changed|server stopped/;
const AMBIGUOUS_GRPC_CODES = new Set([1, 2, DEADLINE_EXCEEDED]);

/**
 * Marks the failure of a call that went out on the wire and may have been carried out: no answer came
 * (etcd may have committed it and the answer was lost), or etcd's answer leaves it open. etcd's other
 * refusals ("no leader", NOSPACE, permission) and a stream it refused are not marked: nothing was applied.
 */
function markSent(err: Error): Error {
  return Object.assign(err, { sent: true });
}

/** Whether a call failed after it went out (see markSent). */
export function wasSent(err: unknown): boolean {
  return (err as { sent?: unknown })?.sent === true;
}

/** A connection to one etcd member's gRPC endpoint, opened on first use and after reset(). */
export class GrpcChannel {
  private session: http2.ClientHttp2Session | undefined;
  // Per session: true once etcd has sent its HTTP/2 settings over it (it serves), until then a promise
  // of that or of the session's closing (servingOrClosed).
  private readonly serving = new WeakMap<http2.ClientHttp2Session, true | Promise<void>>();
  private lastError = '';
  private readonly authority: string;

  /** `endpoint`: as given to etcd3 (http://host:port, https://host:port, or host:port). */
  constructor(endpoint: string, private readonly tls?: ChannelTls) {
    this.authority = /^https?:\/\//i.test(endpoint) ? endpoint : `${tls ? 'https' : 'http'}://${endpoint}`;
  }

  /** Calls `method` ("/etcdserverpb.KV/Txn") with one message; the answer's message bytes. */
  unary(method: string, message: Uint8Array, deadlineMs: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const session = this.connected();
      let req: http2.ClientHttp2Stream | undefined;
      let settled = false;
      // Errors are made only for the outcome that counts: a stream emits 'close' after every answer.
      const settle = (outcome: () => [Error | undefined, Buffer?]) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const [err, body] = outcome();
        if (err) reject(err);
        else resolve(body!);
      };
      const timer = setTimeout(() => {
        req?.close(http2.constants.NGHTTP2_CANCEL);
        const waited = req ? '' : session.connecting ? ' (still connecting; the write was not sent)' : ' (etcd accepted the connection but is not serving yet; the write was not sent)';
        const err = grpcError(DEADLINE_EXCEEDED, `Deadline exceeded after ${deadlineMs} ms${waited}, remote_addr=${this.authority}`);
        settle(() => [req ? markSent(err) : err]);
      }, deadlineMs);
      const send = () => {
        if (settled) return;
        if (session.closed || session.destroyed) return settle(() => [this.unavailable('the connection closed before etcd was serving')]);
        try {
          req = session.request({ ':method': 'POST', ':path': method, 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': `${deadlineMs}m` });
        } catch (err) {
          return settle(() => [this.unavailable((err as Error).message)]); // e.g. etcd sent GOAWAY meanwhile
        }
        this.answer(req, settle);
        req.end(frame(message));
      };
      const serving = this.serving.get(session);
      if (serving === true) send();
      else void serving?.then(send);
    });
  }

  // A stream's answer: its message, or its gRPC status as an error.
  private answer(req: http2.ClientHttp2Stream, settle: (outcome: () => [Error | undefined, Buffer?]) => void): void {
    const chunks: Buffer[] = [];
    let status: number | undefined;
    let details = '';
    const takeStatus = (headers: http2.IncomingHttpHeaders) => {
      if (headers['grpc-status'] === undefined) return;
      status = Number(headers['grpc-status']);
      details = percentDecoded(String(headers['grpc-message'] ?? ''));
    };
    req.on('response', takeStatus); // an answer that is only an error carries its status in the headers
    req.on('trailers', takeStatus);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () =>
      settle(() => {
        if (status === undefined) return [markSent(grpcError(INTERNAL, `etcd's answer had no gRPC status, remote_addr=${this.authority}`))];
        if (status === 0) return unframe(Buffer.concat(chunks));
        const err = grpcError(status, details);
        return [AMBIGUOUS_GRPC_CODES.has(status) || AMBIGUOUS_ETCD_ERRORS.test(details) ? markSent(err) : err];
      }),
    );
    // Without an answer: a stream etcd refused (REFUSED_STREAM) was not processed; any other may have been.
    const unanswered = (what: string) => (req.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM ? this.unavailable(what) : markSent(this.unavailable(what)));
    req.on('error', (err: Error) => settle(() => [unanswered(err.message)]));
    req.on('close', () => settle(() => [unanswered(`the stream closed without an answer (code ${req.rstCode})`)]));
  }

  /**
   * Opens a new connection for the next call (after a host failure); calls in flight end on the old one,
   * and calls still waiting for etcd to serve it fail as UNAVAILABLE (retried like any).
   */
  reset(): void {
    const old = this.session;
    this.session = undefined;
    old?.close();
  }

  /** Closes the connection. */
  close(): void {
    this.session?.destroy();
    this.session = undefined;
  }

  private connected(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = http2.connect(this.authority, { ca: this.tls?.rootCertificate, cert: this.tls?.certChain, key: this.tls?.privateKey, settings: { initialWindowSize: WINDOW_BYTES } });
    s.on('connect', () => {
      this.lastError = '';
      if (!s.destroyed) s.setLocalWindowSize(WINDOW_BYTES); // a reset() while connecting destroys it first
    });
    s.on('error', (err: Error) => (this.lastError = err.message));
    s.on('goaway', () => this.forget(s));
    s.on('close', () => this.forget(s));
    this.serving.set(s, this.servingOrClosed(s));
    s.unref(); // an idle connection does not keep the process alive; a call's deadline timer does
    this.session = s;
    return s;
  }

  /**
   * Resolves once etcd serves over `s` or `s` has closed. A restarting etcd accepts connections before it
   * serves them; a write queued on such a connection past its deadline could still be applied once etcd
   * is up, after its caller was told it failed. Waiting for etcd's settings means such a write is never sent.
   */
  private servingOrClosed(s: http2.ClientHttp2Session): Promise<void> {
    return new Promise((resolve) => {
      s.once('remoteSettings', () => {
        this.serving.set(s, true);
        resolve();
      });
      s.once('close', resolve);
    });
  }

  private forget(s: http2.ClientHttp2Session): void {
    if (this.session === s) this.session = undefined;
  }

  private unavailable(what: string): Error {
    return grpcError(UNAVAILABLE, `${what}${this.lastError ? `. Last error: ${this.lastError}` : ''}, remote_addr=${this.authority}`);
  }
}

// grpc-message is percent-encoded; a malformed one is kept as sent rather than thrown on (in an event handler, uncaught).
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function frame(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

// The one message of a unary answer; etcd does not compress unless asked (we send no grpc-accept-encoding).
function unframe(body: Buffer): [Error | undefined, Buffer?] {
  if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) > body.length - 5) {
    return [grpcError(INTERNAL, `etcd's answer is not one uncompressed gRPC message (${body.length} bytes)`)];
  }
  return [undefined, body.subarray(5, 5 + body.readUInt32BE(1))];
}
