import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, createApi, errorFromResponse } from './http';

afterEach(() => vi.unstubAllGlobals());

describe('errorFromResponse', () => {
  it('carries the message and reason of a Kubernetes Status', async () => {
    const res = new Response(JSON.stringify({ kind: 'Status', message: 'node node-b is down', reason: 'ServiceUnavailable', code: 503 }), { status: 503 });
    const err = await errorFromResponse(res);
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.message, err.reason]).toEqual([503, 'node node-b is down', 'ServiceUnavailable']);
  });

  it('falls back to the status line and the start of a plain body', async () => {
    const err = await errorFromResponse(new Response('upstream timed out', { status: 504, statusText: 'Gateway Timeout' }));
    expect(err.message).toBe('504 Gateway Timeout: upstream timed out');
  });
});

describe('createApi', () => {
  it('sends the bearer token and the content type, and reports a refused token', async () => {
    const calls: RequestInit[] = [];
    vi.stubGlobal('fetch', async (_path: string, init: RequestInit) => {
      calls.push(init);
      return new Response(JSON.stringify({ kind: 'Status', message: 'token expired' }), { status: 401 });
    });
    let refused = 0;
    const api = createApi('s3cret', () => refused++);
    await expect(api.json('PATCH', '/x', { body: { spec: {} }, contentType: 'application/merge-patch+json' })).rejects.toThrow('token expired');
    const headers = calls[0]?.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer s3cret');
    expect(headers['Content-Type']).toBe('application/merge-patch+json');
    expect(calls[0]?.body).toBe('{"spec":{}}');
    expect(refused).toBe(1);
  });
});
