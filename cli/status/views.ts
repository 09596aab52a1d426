/**
 * Where `status --watch` draws: a terminal (the summary block rewritten in
 * place), a pipe or file (the block once, then one line per change, no
 * control sequences), or JSON lines. Each view only writes; when and what
 * to draw is the watch loop's business.
 */
import type { StatusSummary, StateChange } from './model.js';
import { renderChange, renderConnectionChange, renderConnectionLost, renderProgress, renderSummary, type RenderContext } from './render.js';
import type { ConnectionLost } from './snapshot.js';

/** What the watch loop asks a view to show. */
export interface StatusView {
  /** The first summary. */
  start(s: StatusSummary): void;
  /** An object changed state (called as changes arrive). */
  change(c: StateChange): void;
  /** The summary changed (called at most every redraw interval). */
  update(s: StatusSummary): void;
  /** The watches lost the server (`lost`), or reach it again (undefined); the objects shown are stale meanwhile. */
  connection(lost: ConnectionLost | undefined): void;
  /** The watch ends: by Ctrl-C (`interrupted`), or with `final` as the summary to end on. */
  finish(final: StatusSummary, interrupted: boolean): void;
}

/** The output stream a view writes to. */
export interface ViewOutput {
  write(text: string): unknown;
  columns?: number;
  rows?: number;
}

/** Names and server of the summary, without the time (taken at each draw). */
export type ViewContext = Omit<RenderContext, 'now'>;

const ESC = '\x1b[';
/** Terminal sequences of the in-place redraw. */
export const TERMINAL = {
  hideCursor: `${ESC}?25l`,
  showCursor: `${ESC}?25h`,
  clearToLineEnd: `${ESC}K`,
  clearToScreenEnd: `${ESC}J`,
  /** Cursor to the start of the line n lines up. */
  up: (n: number) => `${ESC}${n}F`,
};

/** Redraws the summary block in place: back up over the previous block, rewrite it, clear what is left below. */
export class TerminalView implements StatusView {
  private drawn = 0;
  private last: StatusSummary | undefined;
  private lost: ConnectionLost | undefined;

  constructor(
    private readonly out: ViewOutput,
    private readonly ctx: ViewContext,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(s: StatusSummary): void {
    this.out.write(TERMINAL.hideCursor);
    this.update(s);
  }

  change(): void {}

  update(s: StatusSummary): void {
    // A line wider than the terminal wraps and a block taller than it scrolls: either breaks counting lines to back up over.
    const width = Math.max(20, (this.out.columns || 80) - 1);
    const height = Math.max(5, (this.out.rows || 24) - 1);
    this.last = s;
    const summary = renderSummary(s, { ...this.ctx, now: this.now() });
    const lines = (this.lost ? [renderConnectionLost(this.lost), ...summary] : summary)
      .slice(0, height)
      .map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
    const back = this.drawn > 0 ? TERMINAL.up(this.drawn) : '';
    this.out.write(`${back}${lines.map((l) => `${l}${TERMINAL.clearToLineEnd}\n`).join('')}${TERMINAL.clearToScreenEnd}`);
    this.drawn = lines.length;
  }

  connection(lost: ConnectionLost | undefined): void {
    this.lost = lost;
    if (this.last) this.update(this.last);
  }

  finish(final: StatusSummary): void {
    this.update(final);
    this.out.write(TERMINAL.showCursor);
  }
}

/** For pipes and files: the summary block once, then a line per change and per move of the convergence count. */
export class PlainView implements StatusView {
  private lastProgress = '';
  private lost = false;
  /** Whether lines followed the last block (then the final summary is worth printing again). */
  private logged = false;

  constructor(
    private readonly out: ViewOutput,
    private readonly ctx: ViewContext,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(s: StatusSummary): void {
    this.block(s);
    this.lastProgress = progressKey(s);
  }

  change(c: StateChange): void {
    this.line(renderChange(c, this.now()));
  }

  update(s: StatusSummary): void {
    if (progressKey(s) === this.lastProgress) return;
    this.lastProgress = progressKey(s);
    this.line(renderProgress(s, this.now()));
  }

  connection(lost: ConnectionLost | undefined): void {
    if (!!lost === this.lost) return;
    this.lost = !!lost;
    this.line(renderConnectionChange(lost, this.now()));
  }

  finish(final: StatusSummary, interrupted: boolean): void {
    if (interrupted || !this.logged) return;
    this.out.write('\n');
    this.block(final);
  }

  private line(text: string): void {
    this.out.write(`${text}\n`);
    this.logged = true;
  }

  private block(s: StatusSummary): void {
    this.out.write(`${renderSummary(s, { ...this.ctx, now: this.now() }).join('\n')}\n`);
  }
}

function progressKey(s: StatusSummary): string {
  return `${s.convergence.converged}/${s.convergence.total}/${s.failures.length}`;
}

/** -o json: the summary document as one line each time it changes. */
export class JsonLinesView implements StatusView {
  constructor(
    private readonly out: ViewOutput,
    private readonly ctx: ViewContext,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(s: StatusSummary): void {
    this.update(s);
  }

  change(): void {}

  update(s: StatusSummary): void {
    this.out.write(`${JSON.stringify(statusDocument(s, { ...this.ctx, now: this.now() }))}\n`);
  }

  connection(lost: ConnectionLost | undefined): void {
    this.out.write(`${JSON.stringify(connectionDocument(lost, { ...this.ctx, now: this.now() }))}\n`);
  }

  finish(): void {}
}

/** The document -o json prints. */
export function statusDocument(s: StatusSummary, r: RenderContext): object {
  return { kind: 'StatusSummary', server: r.server, time: r.now.toISOString(), ...s };
}

/** The document -o json prints when the connection is lost or back: `connected`, and while lost `since` and `error`. */
export function connectionDocument(lost: ConnectionLost | undefined, r: RenderContext): object {
  const state = lost ? { connected: false, since: lost.since.toISOString(), error: lost.error } : { connected: true };
  return { kind: 'ConnectionState', server: r.server, time: r.now.toISOString(), ...state };
}
