/**
 * Raw HTTPS requests to a test apiserver (for what kubectl and client-node
 * do not send: malformed bodies, odd headers, exact status codes).
 */
import https from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/** A response with its body as text and, when it parses, as JSON. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** Request options. */
export interface RawRequest {
  method?: string;
  path: string;
  body?: string | Buffer;
  contentType?: string;
  /** Overrides the kubeconfig's token; null sends no Authorization header. */
  authorization?: string | null;
  headers?: Record<string, string>;
  /** The connection pool to send it on (warm keep-alive connections send many requests at one instant). */
  agent?: https.Agent;
}

/** Sends one request to the kubeconfig's server with its CA and token. */
export function rawRequest(kc: k8s.KubeConfig, r: RawRequest): Promise<RawResponse> {
  const cluster = kc.getCurrentCluster()!;
  const token = kc.getCurrentUser()!.token!;
  const url = new URL(r.path, cluster.server);
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  if (r.authorization !== null) headers.authorization = r.authorization ?? `Bearer ${token}`;
  if (r.body !== undefined) {
    headers['content-type'] = r.contentType ?? 'application/json';
    // Node frames DELETE bodies only with an explicit length.
    headers['content-length'] = String(Buffer.byteLength(r.body));
  }
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: r.method ?? 'GET', headers, ca, ...(r.agent ? { agent: r.agent } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(r.body);
  });
}
