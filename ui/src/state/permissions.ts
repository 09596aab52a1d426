/**
 * Whether an action can be taken: the user must be allowed to (known from
 * a SelfSubjectAccessReview) and the object must be in a state where the
 * action means something. A button that cannot act is disabled, and its
 * title says why. Pure.
 */

/** What a SelfSubjectAccessReview asks (its spec.resourceAttributes). */
export interface AccessQuestion {
  verb: string;
  group: string;
  resource: string;
  /** Undefined for a cluster-scoped resource, or every namespace. */
  namespace?: string;
  subresource?: string;
}

/** Whether a button acts, and the explanation shown as its title. */
export interface Availability {
  disabled: boolean;
  title: string;
}

const CAIRN = 'cairn.dev';

/** The question for `verb` on a Cairn resource (or one of its subresources). */
export function cairnQuestion(verb: string, resource: string, namespace?: string, subresource?: string): AccessQuestion {
  return { verb, group: CAIRN, resource, namespace, subresource };
}

/** A stable key for caching the answer to a question. */
export function questionKey(q: AccessQuestion): string {
  return [q.verb, q.group, q.resource, q.subresource ?? '', q.namespace ?? ''].join('|');
}

/** The question in words, e.g. `patch instances in cluster demo`. */
export function describeQuestion(q: AccessQuestion): string {
  const what = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
  return `${q.verb} ${what}${q.namespace ? ` in cluster ${q.namespace}` : ' in every cluster'}`;
}

/**
 * Whether a button acts: `allowed` is the review's answer (undefined while
 * it is asked), `blocker` what keeps the object from taking the action now
 * (e.g. "already running"), and `purpose` the title of an enabled button.
 */
export function availability(allowed: boolean | undefined, q: AccessQuestion, purpose: string, blocker?: string): Availability {
  if (allowed === false) return { disabled: true, title: `You are not allowed to ${describeQuestion(q)}.` };
  if (allowed === undefined) return { disabled: true, title: 'Checking your permissions…' };
  if (blocker) return { disabled: true, title: blocker };
  return { disabled: false, title: purpose };
}
