/**
 * Which bytes of an instance's console.log a log request reads: the pure
 * part of `cairn logs` on the agent. The file holds every run appended
 * (rotation aside); the current run starts at the offset its state records.
 */
import type { LogOptions } from '../../api/tunnel.js';

/** The size console.log had at a moment: sampled by the agent, for sinceSeconds. */
export interface LogMark {
  at: number;
  size: number;
}

/** A byte range of the file; `end` is undefined only when following: up to the end, and beyond. */
export interface LogRange {
  start: number;
  end?: number;
}

/** What the range depends on besides the options. */
export interface LogFacts {
  size: number;
  /** Where the current run's output begins (0 when unknown or rotated away). */
  runStart: number;
  marks: readonly LogMark[];
  /** When the file was last rotated (epoch ms): sizes sampled before then are of the old file. */
  rotatedAt?: number;
  now: number;
}

/** The range before tailLines is applied (that needs the content), or a message why there is nothing to read. */
export function logRange(o: LogOptions, f: LogFacts): LogRange | { problem: string } {
  // Without follow the answer is the log as it was when asked: the lines appended while it is read
  // would make a `--tail 3` print four.
  const end = o.follow ? {} : { end: f.size };
  if (o.fromOffset !== undefined) return { start: o.fromOffset <= f.size ? o.fromOffset : 0, ...end };
  // A run start beyond the file was rotated away: everything the file holds now is the current run's.
  const runStart = f.runStart > f.size ? 0 : f.runStart;
  if (o.previous) {
    if (runStart === 0) return { problem: 'no output of an earlier run is kept (this is the first run, or the log was rotated since)' };
    return { start: Math.min(sinceStart(o, f, 0), runStart), end: runStart };
  }
  return { start: sinceStart(o, f, runStart), ...end };
}

/** The later of `start` and the size the log had sinceSeconds ago (the newest mark at or before then). */
function sinceStart(o: LogOptions, f: LogFacts, start: number): number {
  if (o.sinceSeconds === undefined) return start;
  const cutoff = f.now - o.sinceSeconds * 1000;
  let size: number | undefined;
  for (const m of f.marks) if (m.at <= cutoff && m.at >= (f.rotatedAt ?? 0)) size = m.size;
  // A mark larger than the file predates a rotation: everything now in the file is newer.
  return size === undefined || size > f.size ? start : Math.max(start, size);
}

/** Where the last `lines` lines of `text` (which ends at a line end or the range's end) begin. */
export function tailIndex(text: Buffer, lines: number): { index: number; complete: boolean } {
  if (lines <= 0) return { index: text.length, complete: true };
  let pos = text.length;
  // A trailing newline ends the last line; it does not begin another.
  if (pos > 0 && text[pos - 1] === 0x0a) pos--;
  for (let found = 0; pos > 0; ) {
    const nl = text.lastIndexOf(0x0a, pos - 1);
    if (nl < 0) break;
    if (++found === lines) return { index: nl + 1, complete: true };
    pos = nl;
  }
  return { index: 0, complete: false };
}

/** Appends a mark when the size changed, keeping at most `keep` (the oldest go first). */
export function addMark(marks: LogMark[], mark: LogMark, keep: number): void {
  const last = marks[marks.length - 1];
  if (last && last.size === mark.size) return;
  marks.push(mark);
  if (marks.length > keep) marks.splice(0, marks.length - keep);
}
