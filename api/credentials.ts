/**
 * The node-credential exchange as both sides see it (apiserver/auth/node-credentials.ts
 * serves it; agent/credentials.ts calls it): a join token POSTed to JOIN_PATH
 * with `{nodeName}` returns a NodeCredential; a node credential POSTed to
 * ROTATE_PATH returns its successor.
 */

export const JOIN_PATH = '/cairn/v1/join';
export const ROTATE_PATH = '/cairn/v1/rotate';

/** What an exchange answers: the clear token, given out once. */
export interface NodeCredential {
  apiVersion: 'auth.cairn.dev/v1alpha1';
  kind: 'NodeCredential';
  cluster: string;
  nodeName: string;
  token: string;
  /** RFC 3339. */
  expires: string;
}
