/**
 * A request Node's HTTP parser refuses (a bad request line, a header too
 * large, a character a URL cannot hold) never reaches a handler. Node's own
 * answer is a bare 400, or a reset when it cannot write; this answers with
 * a Kubernetes Status like every other error, then closes the connection,
 * which is all a client that sent garbage can expect.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors.js';

/** The server's 'clientError' listener. */
export function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  // A client that went away, or a connection mid-response, has nothing left to answer.
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge
    ? new ApiError(431, 'RequestHeaderFieldsTooLarge', 'the request line and headers are too large (at most 16 KiB); send a shorter URL or fewer headers')
    : new ApiError(400, 'BadRequest', `the request could not be parsed (${err.code ?? err.message}); check the request line and headers`);
  // An answer to HEAD has no body, and a client reading one takes the body for garbage.
  const body = err.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ' ? '' : JSON.stringify(status.toStatus());
  socket.end(`HTTP/1.1 ${status.code} ${http.STATUS_CODES[status.code]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
