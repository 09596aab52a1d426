import { expect } from 'chai';
import fc from 'fast-check';
import { decodeFrame, encodeFrame, FrameKind, payloadJson } from '../../../../api/tunnel.js';
import { logOptions } from '../../../../apiserver/tunnel/instance-log.js';
import { logPath } from '../../../../apiserver/tunnel/log-source.js';
import { startOffset, streamEnd } from '../../../../apiserver/tunnel/node-tunnel.js';

describe('tunnel protocol', () => {
  it('round-trips frames of every kind (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.values(FrameKind)), fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.uint8Array({ maxLength: 64 }), (kind, stream, bytes) => {
        const f = decodeFrame(encodeFrame(kind, stream, Buffer.from(bytes)))!;
        expect([f.kind, f.stream, [...f.payload]]).to.deep.equal([kind, stream, [...bytes]]);
      }),
    );
  });
  it("keeps a bad offset or close status from an agent out of HTTP headers and WebSocket close codes", () => {
    const json = (v: unknown) => Buffer.from(JSON.stringify(v));
    expect([{ offset: 42 }, { offset: '1\r\nX: y' }, { offset: -1 }, { offset: 1.5 }, {}, [1]].map((p) => startOffset(json(p)))).to.deep.equal([42, 0, 0, 0, 0, 0]);
    expect(streamEnd(Buffer.alloc(0))).to.equal(undefined);
    expect(streamEnd(json({ status: 404, message: 'no such instance' }))).to.deep.equal({ status: 404, message: 'no such instance' });
    for (const bad of [{}, { status: 1500 }, { status: 'x', message: 7 }, { status: 200 }]) {
      expect(streamEnd(json(bad)), JSON.stringify(bad)).to.deep.equal({ status: 502, message: 'the agent ended the stream with a malformed failure' });
    }
  });

  it('carries objects as JSON and rejects short or unknown frames', () => {
    const f = decodeFrame(encodeFrame(FrameKind.Open, 7, { kind: 'log', name: 'x' }))!;
    expect(payloadJson(f.payload)).to.deep.equal({ kind: 'log', name: 'x' });
    expect(decodeFrame(Buffer.from([2, 0, 0]))).to.equal(undefined);
    expect(decodeFrame(Buffer.from([9, 0, 0, 0, 1]))).to.equal(undefined);
    expect(payloadJson(Buffer.from('"text"'))).to.equal(undefined);
  });
});

describe('log request options', () => {
  it('parses pods/log parameters', () => {
    expect(logOptions({ follow: 'true', tailLines: '10', sinceSeconds: '60' })).to.deep.equal({ follow: true, tailLines: 10, sinceSeconds: 60 });
    expect(logOptions({ follow: 'false', previous: '1' })).to.deep.equal({ previous: true });
  });
  it('names the bad parameter', () => {
    expect(() => logOptions({ tailLines: '-1' })).to.throw(/tailLines="-1" must be a whole number of at least 0/);
    expect(() => logOptions({ sinceSeconds: '0' })).to.throw(/sinceSeconds="0" must be a whole number of at least 1/);
    expect(() => logOptions({ follow: 'yes' })).to.throw(/follow="yes" is not a boolean/);
    expect(() => logOptions({ follow: 'true', previous: 'true' })).to.throw(/cannot be combined/);
  });
  it('puts options back into a forwarded URL', () => {
    expect(logPath({ namespace: 'demo', name: 'web' }, { follow: true, fromOffset: 42, previous: false })).to.equal('/apis/cairn.dev/v1alpha1/namespaces/demo/instances/web/log?follow=true&fromOffset=42');
  });
});
