/**
 * Answers to SelfSubjectAccessReviews, asked once per question and session
 * (permissions rarely change while a page is open; logging in again asks
 * afresh). A review that fails counts as not allowed, with the error kept
 * for the title.
 */
import { canI } from '../api/reviews';
import type { Api } from '../api/http';
import { type AccessQuestion, questionKey } from './permissions';

export class AccessCache {
  private readonly answers = new Map<string, boolean>();
  private readonly asking = new Map<string, Promise<boolean>>();

  constructor(private readonly api: Api) {}

  /** The answer if known. */
  answer(q: AccessQuestion): boolean | undefined {
    return this.answers.get(questionKey(q));
  }

  /** The answer, asking the server the first time. */
  ask(q: AccessQuestion): Promise<boolean> {
    const key = questionKey(q);
    const known = this.answers.get(key);
    if (known !== undefined) return Promise.resolve(known);
    let pending = this.asking.get(key);
    if (!pending) {
      pending = canI(this.api, q)
        .catch(() => false)
        .then((allowed) => {
          this.answers.set(key, allowed);
          this.asking.delete(key);
          return allowed;
        });
      this.asking.set(key, pending);
    }
    return pending;
  }
}
