/** EventStream: the initial state a watch writes is let past the stream's cap until the client has read it once. */
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { EventStream } from '../../../../apiserver/http/event-stream.js';
import { WatchBudget } from '../../../../apiserver/http/watch-budget.js';

/** A response whose client reads nothing until told to. */
class UnreadResponse extends EventEmitter {
  writableLength = 0;
  writableEnded = false;
  writeHead() { return this; }
  flushHeaders() {}
  write(chunk: string) { this.writableLength += chunk.length; return false; }
  end() { this.writableEnded = true; }
  destroy() { this.emit('close'); }
  /** The client read everything. */
  drain() { this.writableLength = 0; this.emit('drain'); }
}

describe('EventStream', () => {
  const open = (res: UnreadResponse) => new EventStream(res as never, { keepaliveMs: 60_000, timeoutMs: 60_000, keepaliveLine: () => '\n', budget: new WatchBudget(1 << 30) });

  it('counts the initial state as behind only once the client has read it once', async () => {
    const res = new UnreadResponse();
    const s = open(res);
    s.initial(() => s.write('x'.repeat(1000)));
    s.write('y'.repeat(10));
    await new Promise((r) => setTimeout(r, 20));
    expect(s.buffered()).to.equal(1010);
    expect(s.behind(), 'only the live event').to.equal(10);
    res.drain();
    s.write('z'.repeat(500));
    await new Promise((r) => setTimeout(r, 20));
    expect(s.behind(), 'after the first drain everything counts').to.equal(500);
    s.close();
  });
});
