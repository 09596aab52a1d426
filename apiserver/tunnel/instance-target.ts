/** Which node an instance's log or console request goes to, with the errors a user gets when there is none. */
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, badRequest, notFound } from '../errors.js';
import type { ApiContext } from '../http/context.js';
import { objectKey } from '../storage/keys.js';
import type { KubeObject } from '../storage/codec.js';
import { FORWARDED_HEADER } from './forward.js';
import type { Tunnels, TunnelRoute } from './tunnels.js';

/** An instance and the route to its node. */
export interface InstanceTarget {
  namespace: string;
  name: string;
  node: string;
  route: NonNullable<TunnelRoute>;
}

/**
 * Finds the instance and its node's tunnel; 404, 409 or 503 when the request cannot reach it. A request
 * another replica forwarded here (`headers` carry FORWARDED_HEADER) is never forwarded again: 503 when
 * the tunnel moved to a third replica meanwhile.
 */
export async function instanceTarget(ctx: ApiContext, tunnels: Tunnels, headers: IncomingHttpHeaders, namespace: string, name: string, purpose: 'log' | 'console'): Promise<InstanceTarget> {
  const def = ctx.registry.find('cairn.dev', 'v1alpha1', 'instances')!;
  const instance = ctx.cache.forResource(def).objects.get(objectKey(def, namespace, name)) as KubeObject | undefined;
  if (!instance) throw notFound('instances', 'cairn.dev', name);
  const spec = (instance.spec ?? {}) as { driver?: string };
  if (purpose === 'console' && (spec.driver ?? 'process') !== 'qemu') {
    throw badRequest(`instance ${namespace}/${name} is a process instance, which has no serial console; read its output with: cairn logs instance ${name} -n ${namespace}`);
  }
  const status = (instance.status ?? {}) as { nodeName?: string; phase?: string };
  if (!status.nodeName) {
    throw new ApiError(409, 'Conflict', `instance ${namespace}/${name} runs on no node yet (phase ${status.phase ?? 'Pending'}), so it has no ${purpose}; wait until it is scheduled (cairn wait instance/${name} --for=condition=Running -n ${namespace})`);
  }
  const route = await tunnels.route(namespace, status.nodeName);
  if (!route) {
    throw new ApiError(503, 'ServiceUnavailable', `node ${status.nodeName}, which runs instance ${namespace}/${name}, has no tunnel open to the apiserver: its agent is down or cannot reach the apiserver (see cairn get node ${status.nodeName} -n ${namespace})`);
  }
  if ('peer' in route && headers[FORWARDED_HEADER]) throw new ApiError(503, 'ServiceUnavailable', `the tunnel of node ${status.nodeName} is moving between apiserver replicas; retry`);
  return { namespace, name, node: status.nodeName, route };
}
