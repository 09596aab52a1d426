/**
 * The RBAC authorizer: allows what the Roles, ClusterRoles and bindings in
 * the apiserver's watch cache allow (auth/rbac.ts decides), and has no
 * opinion otherwise, so the union authorizer turns "nobody allowed it" into
 * the 403 (and later authorizers may still allow).
 *
 * Concurrency and cost: evaluation reads the cache synchronously (no
 * awaiting, so it sees one consistent state); roles are looked up by key,
 * and a request walks every binding until one allows it, which is cheap for
 * the few bindings a Cairn installation has (about one per user). The cache may
 * lag etcd (a binding just created through another replica), so a request
 * no rule allows is evaluated once more after the cache caught up, the way
 * the node authorizer does; only refusals pay that wait.
 */
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { objectKey } from '../storage/keys.js';
import { clusterRoleBindingDefinition, clusterRoleDefinition, rbacDefinitions, roleBindingDefinition, roleDefinition } from '../builtin/rbac.js';
import type { RequestAttributes } from './attributes.js';
import type { Authorizer, Decision } from './authorizer.js';
import { evaluate, type BindingObject, type RbacPolicy, type RbacVerdict } from './rbac.js';
import { escalationAdmission } from './rbac-escalation.js';

/** The part of the watch cache the authorizer reads (WatchCache has it). */
export interface RbacCache {
  forResource(def: ResourceDefinition): { readonly objects: ReadonlyMap<string, KubeObject> };
  /** Resolves once the cache holds everything etcd had when called (false on timeout). */
  waitFresh(timeoutMs: number): Promise<boolean>;
}

/** Tuning of the RBAC authorizer. */
export interface RbacAuthorizerOptions {
  /** Longest wait for the cache to catch up before a refusal stands; default 2 s. */
  freshnessWaitMs?: number;
}

/** Authorizes by the RBAC objects in the watch cache. */
export class RbacAuthorizer implements Authorizer {
  private readonly policy: RbacPolicy;
  private readonly waitMs: number;

  constructor(
    private readonly cache: RbacCache,
    opts: RbacAuthorizerOptions = {},
  ) {
    // Fails at start, not on the first request, when the RBAC kinds are not registered.
    for (const def of rbacDefinitions) cache.forResource(def);
    this.policy = cachePolicy(cache);
    this.waitMs = opts.freshnessWaitMs ?? 2000;
  }

  async authorize(a: RequestAttributes): Promise<Decision> {
    const first = evaluate(this.policy, a);
    if (first.allowed) return this.decision(first, a);
    if (!(await this.cache.waitFresh(this.waitMs))) return this.decision(first, a);
    return this.decision(evaluate(this.policy, a), a);
  }

  // An allowed write of a role or binding is admitted only if it grants nothing its author lacks.
  private decision(v: RbacVerdict, a: RequestAttributes): Decision {
    if (!v.allowed) return { decision: 'noOpinion', reason: v.reason };
    const admit = escalationAdmission(this.policy, a);
    return { decision: 'allow', reason: v.reason, ...(admit ? { admit } : {}) };
  }
}

/** The policy as the watch cache holds it now. */
export function cachePolicy(cache: Pick<RbacCache, 'forResource'>): RbacPolicy {
  const objects = (def: ResourceDefinition) => cache.forResource(def).objects;
  return {
    clusterRoleBindings: () => objects(clusterRoleBindingDefinition).values() as Iterable<BindingObject>,
    roleBindings: (namespace) => inNamespace(objects(roleBindingDefinition).values(), namespace),
    role: (namespace, name) =>
      namespace === undefined
        ? objects(clusterRoleDefinition).get(objectKey(clusterRoleDefinition, undefined, name))
        : objects(roleDefinition).get(objectKey(roleDefinition, namespace, name)),
  };
}

function* inNamespace(bindings: Iterable<KubeObject>, namespace: string): Iterable<BindingObject> {
  for (const b of bindings) if (b.metadata.namespace === namespace) yield b;
}
