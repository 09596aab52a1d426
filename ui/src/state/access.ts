/**
 * Answers to SelfSubjectAccessReviews, asked once per question and session
 * (permissions rarely change while a page is open; logging in again asks
 * afresh). A review that fails counts as not allowed for the view that
 * asked, and is not remembered: the next view that needs it asks again
 * (a 429 or a dropped connection once read "not allowed" for the session).
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
        .then(
          (allowed) => {
            this.answers.set(key, allowed);
            return allowed;
          },
          () => false,
        )
        .finally(() => this.asking.delete(key));
      this.asking.set(key, pending);
    }
    return pending;
  }
}
