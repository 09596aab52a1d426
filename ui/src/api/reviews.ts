/**
 * The self reviews: who the server takes the token to be
 * (SelfSubjectReview, as `kubectl auth whoami`) and whether it may do
 * something (SelfSubjectAccessReview, as `kubectl auth can-i`).
 */
import type { AccessQuestion } from '../state/permissions';
import type { Api } from './http';

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string } };
}

interface SelfSubjectAccessReview {
  status?: { allowed?: boolean };
}

/** The user name the token authenticates as. */
export async function whoami(api: Api): Promise<string> {
  const review = await api.json<SelfSubjectReview>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  const name = review.status?.userInfo?.username;
  if (!name) throw new Error('the server accepted the token but named no user');
  return name;
}

/** Whether the token may do what `question` asks. */
export async function canI(api: Api, question: AccessQuestion): Promise<boolean> {
  const review = await api.json<SelfSubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { ...question, namespace: question.namespace ?? '' } },
    },
  });
  return review.status?.allowed === true;
}
