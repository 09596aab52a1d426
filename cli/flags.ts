/** Parsing of flag values shared by every command. */
import { InvalidArgumentError, Option } from 'commander';
import { MAX_TIMER_MS } from '../runtime/clock.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `5m`, `1h30m`, `250ms` or bare seconds → milliseconds. */
export function parseDuration(value: string): number {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw new InvalidArgumentError(`"${value}" is not a duration; use forms like 30s, 5m, 1h30m`);
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNITS[p[2]!]!, 0);
}

/** A TCP port, 0 meaning "pick a free one". */
export function parsePort(value: string): number {
  const n = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`"${value}" is not a port (0-65535; 0 picks a free port)`);
  return n;
}

/** A whole number ≥ 1. */
export function parseCount(value: string): number {
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a whole number from 1 to 9999`);
  return Number(value);
}

/** A comma-separated list of at least one item. */
export function parseList(value: string): string[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError(`"${value}" names nothing; give one or more, comma-separated`);
  return items;
}

/** Milliseconds as parseDuration reads them back: 120000 → `2m`, 90500 → `1m30.5s`, 86400000 → `24h`, 0 → `0s`. */
export function formatDuration(ms: number): string {
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  return `${hours ? `${hours}h` : ''}${minutes ? `${minutes}m` : ''}${seconds || (!hours && !minutes) ? `${seconds}s` : ''}`;
}

/**
 * A duration flag whose help shows its default as one to type (`60s`), not in milliseconds. `positive`
 * refuses 0 where it would make a loop spin (a heartbeat or retry interval). `lifetime`: a span written
 * into an object or a lease (a token's expiry), never a timer of this process, so not held to a timer's
 * longest wait.
 */
export function durationOption(flags: string, description: string, defaultMs: number, opts: { positive?: boolean; lifetime?: boolean } = {}): Option {
  const parse = (value: string) => {
    const ms = parseDuration(value);
    if (opts.positive && ms === 0) throw new InvalidArgumentError(`"${value}" is no time at all; give a duration above 0, e.g. ${formatDuration(defaultMs)}`);
    // A longer timer would fire at once: a --timeout 720h would time out at the start.
    if (!opts.lifetime && ms > MAX_TIMER_MS) throw new InvalidArgumentError(`"${value}" is longer than ${formatDuration(Math.floor(MAX_TIMER_MS / 3_600_000) * 3_600_000)}, the longest wait this tool keeps`);
    return ms;
  };
  return new Option(flags, description).argParser(parse).default(defaultMs, formatDuration(defaultMs));
}

/** `--log-level`: one of winston's levels the processes use (another would silently drop every line). */
export function logLevelOption(defaultLevel: string): Option {
  return new Option('--log-level <level>', 'how much to log').choices(['error', 'warn', 'info', 'debug']).default(defaultLevel);
}
