/** Who a request is from, as authentication establishes it: a user, its groups, and for a node credential its Node. */

/** The machine a node credential is bound to. */
export interface NodeIdentity {
  /** The Cluster (namespace) the node belongs to. */
  cluster: string;
  /** The Node's name. */
  name: string;
}

/** Who a request is from once its token is recognised. */
export interface UserInfo {
  name: string;
  groups: string[];
  /** Set for a node credential: the only Node its holder may act as. */
  node?: NodeIdentity;
  /** Set when the request acts as this user by impersonation: who it authenticated as. */
  impersonatedBy?: string;
}
