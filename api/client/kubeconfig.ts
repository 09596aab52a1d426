/**
 * The KubeConfig every Cairn client (controller, agent, CLI, tests) uses.
 * client-node 1.x builds a new https.Agent for every request, so each call
 * pays a TLS handshake; a controller writing thousands of objects needs its
 * connections reused, so this subclass hands out one keep-alive agent per
 * KubeConfig instead.
 */
import type http from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';

/** A KubeConfig whose requests share one keep-alive connection pool. */
export class PooledKubeConfig extends KubeConfig {
  private pooledAgent: http.Agent | undefined;

  /** Returns the shared agent (client-node calls this once per request). */
  protected createAgentPooled(cluster: unknown, options: Record<string, unknown>): http.Agent {
    this.pooledAgent ??= (KubeConfig.prototype as unknown as AgentFactory).createAgent.call(this, cluster, {
      ...options,
      keepAlive: true,
      maxSockets: 64,
    });
    return this.pooledAgent;
  }

  /**
   * The same connection settings and users (a token the agent rotates reaches both) over a connection
   * pool of its own: for requests that must never queue behind a burst of others (the node lease).
   */
  withOwnPool(): PooledKubeConfig {
    const fork = new PooledKubeConfig();
    fork.loadFromOptions({ clusters: this.clusters, contexts: this.contexts, currentContext: this.currentContext, users: this.users });
    Object.defineProperty(fork, 'users', { get: () => this.users, set: (users: KubeConfig['users']) => (this.users = users) });
    return fork;
  }

  /** Closes the pooled connections (call on shutdown). */
  destroyAgent(): void {
    this.pooledAgent?.destroy();
    this.pooledAgent = undefined;
  }
}

interface AgentFactory {
  createAgent(cluster: unknown, options: Record<string, unknown>): http.Agent;
}

// createAgent is private in client-node's typings; override it at runtime.
(PooledKubeConfig.prototype as unknown as AgentFactory).createAgent = function (this: PooledKubeConfig, cluster, options) {
  return (this as unknown as { createAgentPooled: AgentFactory['createAgent'] }).createAgentPooled(cluster, options);
};

/** Where a client finds its apiserver and credentials. */
export interface ConnectionOptions {
  /** Path of a kubeconfig; otherwise KUBECONFIG or ~/.kube/config. */
  kubeconfig?: string;
  /** Context of the kubeconfig to use. */
  context?: string;
  /** API URL; with token, used instead of a kubeconfig. */
  server?: string;
  /** Bearer token for server. */
  token?: string;
  /** PEM CA bundle file for server. */
  caFile?: string;
  /** Skip TLS verification (development only). */
  insecureSkipTlsVerify?: boolean;
}

/** Loads a pooled KubeConfig from a file, the environment, or a server URL and token. */
export function loadKubeConfig(opts: ConnectionOptions = {}): PooledKubeConfig {
  const kc = new PooledKubeConfig();
  if (opts.server && !opts.kubeconfig) {
    kc.loadFromOptions({
      clusters: [{ name: 'cairn', server: opts.server, caFile: opts.caFile, skipTLSVerify: opts.insecureSkipTlsVerify ?? false }],
      users: [{ name: 'cairn', token: opts.token }],
      contexts: [{ name: 'cairn', cluster: 'cairn', user: 'cairn' }],
      currentContext: 'cairn',
    });
    return kc;
  }
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  if (opts.context) {
    if (!kc.contexts.some((c) => c.name === opts.context)) {
      throw new Error(`context "${opts.context}" does not exist in the kubeconfig (its contexts: ${kc.contexts.map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(opts.context);
  }
  overrideCurrent(kc, opts);
  return kc;
}

// Flags given with a kubeconfig override its current cluster and user, as kubectl's do.
function overrideCurrent(kc: KubeConfig, opts: ConnectionOptions): void {
  const cluster = kc.getCurrentCluster()?.name;
  const user = kc.getCurrentUser()?.name;
  kc.clusters = kc.clusters.map((c) =>
    c.name !== cluster
      ? c
      : {
          ...c,
          ...(opts.server ? { server: opts.server } : {}),
          ...(opts.caFile ? { caFile: opts.caFile, caData: undefined } : {}),
          ...(opts.insecureSkipTlsVerify ? { skipTLSVerify: true } : {}),
        },
  );
  if (opts.token) kc.users = kc.users.map((u) => (u.name === user ? { ...u, token: opts.token, authProvider: undefined, exec: undefined } : u));
}
