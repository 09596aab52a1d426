/**
 * The size of a slow scenario: its smoke size in `npm test` (which must stay
 * within CI's time), its full size under `npm run test:full` (CAIRN_FULL=1).
 */
export const FULL = process.env.CAIRN_FULL === '1';

/** `smoke` in npm test, `full` under npm run test:full. */
export function scaled<T>(smoke: T, full: T): T {
  return FULL ? full : smoke;
}
