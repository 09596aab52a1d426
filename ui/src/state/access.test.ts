/** The access cache: one review per question, and a failed review not remembered. */
import { describe, expect, it } from 'vitest';
import type { Api } from '../api/http';
import { AccessCache } from './access';
import { cairnQuestion } from './permissions';

/** An Api whose access reviews answer `answers` in turn (an Error: the review fails). */
function reviews(answers: Array<boolean | Error>): Api & { asked: number } {
  const api = {
    token: 't',
    asked: 0,
    json: async <T>() => {
      const next = answers[api.asked++];
      if (next instanceof Error) throw next;
      return { status: { allowed: next } } as T;
    },
    stream: async () => new Response(),
  };
  return api;
}

describe('AccessCache', () => {
  const q = cairnQuestion('delete', 'instances', 'demo');

  it('asks the server once per question', async () => {
    const api = reviews([true]);
    const access = new AccessCache(api);
    expect(await Promise.all([access.ask(q), access.ask(q)])).toEqual([true, true]);
    expect(await access.ask(q)).toBe(true);
    expect(access.answer(q)).toBe(true);
    expect(api.asked).toBe(1);
  });

  it('answers a failed review as not allowed without remembering it, so the next view asks again', async () => {
    const api = reviews([new Error('429 Too Many Requests'), true]);
    const access = new AccessCache(api);
    expect(await access.ask(q)).toBe(false);
    expect(access.answer(q)).toBe(undefined);
    expect(await access.ask(q)).toBe(true);
    expect(api.asked).toBe(2);
  });
});
