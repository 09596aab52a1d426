/**
 * Newline-delimited JSON off a byte stream: a watch sends one event per
 * line, but the network cuts the stream wherever it likes — in the middle
 * of a line, even in the middle of a multi-byte character. Pure.
 */

/** Splits text into complete lines, keeping an unfinished last line for the next chunk. */
export class LineSplitter {
  private pending = '';

  /** The lines completed by `text`, without their newlines. */
  push(text: string): string[] {
    const parts = (this.pending + text).split('\n');
    this.pending = parts.pop() ?? '';
    return parts;
  }

  /** The unfinished last line, when the stream ends without a newline. */
  flush(): string[] {
    const rest = this.pending;
    this.pending = '';
    return rest === '' ? [] : [rest];
  }
}

/** Turns byte chunks into parsed JSON values, one per non-blank line. */
export class NdjsonDecoder<T> {
  private readonly text = new TextDecoder();
  private readonly lines = new LineSplitter();

  /** The values completed by this chunk. Throws on a line that is not JSON. */
  push(chunk: Uint8Array): T[] {
    return parseLines<T>(this.lines.push(this.text.decode(chunk, { stream: true })));
  }

  /** The last value, when the stream ended without a newline. */
  end(): T[] {
    return parseLines<T>([...this.lines.push(this.text.decode()), ...this.lines.flush()]);
  }
}

// Blank lines are the server's keepalives.
function parseLines<T>(lines: string[]): T[] {
  return lines.filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);
}
