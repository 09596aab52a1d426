/**
 * Operation ids after Ganeti's RPC design: each supervised operation is named
 * by when it started, the agent's pid, the worker's pid and a random part,
 * e.g. 20241122T044501.123Z-812-4411-9f3ac2e1. An operator can find the
 * worker in `ps` and the operation in the logs from the id alone, and ids
 * never repeat across agent restarts. Pure apart from the random default.
 */
import { randomBytes } from 'node:crypto';

/** The parts an operation id is made of. */
export interface OperationIdParts {
  time: Date;
  parentPid: number;
  childPid: number;
  random: string;
}

const ID_PATTERN = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})Z-(\d+)-(\d+)-([0-9a-f]{8})$/;

/** A new operation id for the worker `childPid` started by `parentPid` at `time`. */
export function newOperationId(parentPid: number, childPid: number, time: Date, random = randomBytes(4).toString('hex')): string {
  const stamp = time.toISOString().replace(/[-:]/g, '');
  return `${stamp}-${parentPid}-${childPid}-${random}`;
}

/** The parts of an operation id, or undefined when `id` is not one. */
export function parseOperationId(id: string): OperationIdParts | undefined {
  const m = ID_PATTERN.exec(id);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, ms, parent, child, random] = m;
  const time = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
  if (Number.isNaN(time.getTime())) return undefined;
  return { time, parentPid: Number(parent), childPid: Number(child), random: random! };
}
