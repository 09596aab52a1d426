/**
 * The text a followed log keeps: new output is appended, and once it grows
 * past a limit the oldest whole lines are dropped, so a chatty instance
 * cannot make the page grow without bound. Pure.
 */

/** How much log text a page keeps (characters). */
export const LOG_LIMIT = 512 * 1024;

/** `text` with `chunk` appended, trimmed from the start (at a line break when there is one) to at most `limit`. */
export function appendLog(text: string, chunk: string, limit = LOG_LIMIT): string {
  const joined = text + chunk;
  if (joined.length <= limit) return joined;
  const cut = joined.length - limit;
  // The first line break at or after the character before the cut: the cut may fall right on a line start.
  const lineStart = joined.indexOf('\n', cut - 1);
  return lineStart < 0 || lineStart === joined.length - 1 ? joined.slice(cut) : joined.slice(lineStart + 1);
}
