/** Parsing of flag values shared by every command. */
import { InvalidArgumentError } from 'commander';

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

/** A comma-separated list. */
export function parseList(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}
