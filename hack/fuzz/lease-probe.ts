/**
 * What a node agent does every heartbeat, timed: renew a Lease. Run during
 * a fuzz or a hostile flood, it shows whether the apiserver kept answering
 * the requests fencing depends on (issue 17: p99 ≤ 1 s).
 */
import type { ApiTarget } from '../bench/lib.js';
import { send } from './runner.js';

/** A running probe; stop() resolves with the latency of every renewal in ms (a failed one counts as Infinity). */
export interface LeaseProbe {
  stop(): Promise<number[]>;
}

/** Creates Lease `ns/name`, then renews it every `everyMs` (one renewal at a time, as NodeFence does). */
export async function startLeaseProbe(t: ApiTarget, ns: string, name: string, everyMs: number): Promise<LeaseProbe> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
  const lease = (renewTime: string) => JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 10, renewTime } });
  const now = () => new Date().toISOString().replace('Z', '000Z');
  await send(t, { method: 'POST', path, contentType: 'application/json', body: lease(now()) });
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await send(t, { method: 'PATCH', path: `${path}/${name}`, contentType: 'application/merge-patch+json', body: JSON.stringify({ spec: { renewTime: now() } }) });
      const ok = typeof res === 'object' && 'status' in res && res.status === 200;
      const took = performance.now() - started;
      latencies.push(ok ? took : Infinity);
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - took)));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}
