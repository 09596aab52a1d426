/**
 * The apiserver's request listener. Resource requests — nearly all traffic —
 * are served directly on Node's http objects (authenticate, read the body
 * within the limit, dispatch), which measurably cuts CPU per request against
 * going through express's router and body parser; everything else
 * (health, version, discovery, OpenAPI) goes to the express app.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import { ApiError } from '../errors.js';
import type { TokenAuthenticator } from '../auth/tokens.js';
import { parseResourcePath } from '../request-info.js';
import { BODY_LIMIT_BYTES, unauthorized } from './app.js';
import type { ApiContext, ApiRequest } from './context.js';
import { tooLarge } from './body.js';
import { serveResource } from './resources-handler.js';
import { sendError, sendJson } from './respond.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Routes resource URLs to the resource handler and the rest to `app`. */
export function createRequestListener(ctx: ApiContext, authenticator: TokenAuthenticator, app: Listener): Listener {
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const info = parseResourcePath(path);
    if (!info) return app(req, res);
    if (!authenticator.authenticate(req.headers.authorization)) return sendJson(res, 401, unauthorized().toStatus());
    readBody(req)
      .then((body) => {
        const apiReq = Object.assign(req, { path, query: q < 0 ? {} : querystring.parse(url.slice(q + 1)), body }) as ApiRequest;
        return serveResource(ctx, apiReq, res, info);
      })
      .catch((err) => sendError(res, err, ctx.log));
  };
}

/** The request body, at most BODY_LIMIT_BYTES (413 beyond, after draining the rest). */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT_BYTES) chunks.push(chunk);
    });
    req.on('end', () => (size > BODY_LIMIT_BYTES ? reject(tooLarge(BODY_LIMIT_BYTES)) : resolve(size === 0 ? undefined : Buffer.concat(chunks, size))));
    req.on('error', (err) => reject(new ApiError(400, 'BadRequest', `the request body could not be read: ${err.message}`)));
  });
}
