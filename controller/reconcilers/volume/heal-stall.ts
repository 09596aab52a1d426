/**
 * A heal that stopped moving while every brick runs. A self-heal daemon
 * crawls its brick's index when it starts, when a brick it saw go comes
 * back, and otherwise only every cluster.heal-timeout (600 s): a daemon
 * idle through a partition never saw the brick go, and an entry whose heal
 * lost to a busy writer waits as well (docs/volumes.md). When the bricks'
 * pending counts stay the same for HEAL_STALL_MS with every brick running
 * and nothing in split-brain, the controller asks every daemon to start
 * again (spec.volumeReplica.brick.recrawl), and waits twice as long after
 * each restart that changed nothing, until the daemons' own crawl comes
 * sooner. Pure.
 */
import { formatTime } from '../../../api/conditions.js';

/** How long unchanged pending counts wait before the first restart of the self-heal daemons. */
export const HEAL_STALL_MS = 30_000;

/** What decides a restart. */
export interface HealStallInput {
  bricks: ReadonlyArray<{ running: boolean; pendingHeals: number }>;
  splitBrain: boolean;
  /** When the controller first saw the current pending counts, on its own clock. */
  countsSince: number;
  /** The bricks' current recrawl token, `<time>#<attempt>`, written by the controller. */
  recrawl: string | undefined;
  /** The daemons' own crawl interval (cluster.heal-timeout). */
  healTimeoutMs: number;
  now: number;
}

/** The recrawl token the bricks should carry, and in how many ms to look again while a heal waits. */
export function healRecrawl(i: HealStallInput): { recrawl: string | undefined; inMs?: number } {
  const keep = { recrawl: i.recrawl };
  const waiting = i.bricks.some((b) => b.pendingHeals > 0);
  if (!waiting || i.splitBrain || !i.bricks.every((b) => b.running)) return keep;
  const last = parseRecrawl(i.recrawl);
  const repeated = !!last && last.at >= i.countsSince;
  const attempt = repeated ? last.attempt + 1 : 0;
  const waitMs = HEAL_STALL_MS * 2 ** attempt;
  if (waitMs >= i.healTimeoutMs) return keep;
  const elapsed = i.now - Math.max(i.countsSince, last?.at ?? -Infinity);
  if (elapsed < waitMs) return { ...keep, inMs: waitMs - elapsed };
  return { recrawl: `${formatTime(i.now)}#${attempt}` };
}

function parseRecrawl(token: string | undefined): { at: number; attempt: number } | undefined {
  const [time, attempt] = (token ?? '').split('#');
  const at = Date.parse(time ?? '');
  return Number.isNaN(at) ? undefined : { at, attempt: Number(attempt) || 0 };
}
