/**
 * The guarantees the chaos suite checks while it breaks things, each a
 * recorder that runs beside the scenario and lists what it saw violated:
 *
 * - CopySampler: never two running copies of an instance, from samples of
 *   every process on the machine every 25 ms, each placed on its host by
 *   its network namespace;
 * - AckedWriter: no acknowledged write lost: a writer creates ConfigMaps
 *   without pause, and every create the API acknowledged must still be
 *   there, with its data;
 * - RvMonitor: resourceVersions only grow along a watch, across the
 *   watch's reconnects;
 * - failuresWithoutHelp: every failure the report shows has a reason, a
 *   message and a hint.
 */
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { CairnClient } from '../../../api/client/cairn-client.js';
import { isLive, readProcStat } from '../../../agent/drivers/process/proc.js';
import { collectFailures, type Failure } from '../../../cli/status/failures.js';
import { kubeGet, onLines } from '../../support/watch-stream.js';
import type { TestNet } from './netns.js';

/** The network namespace `pid` is in ('' when it is gone). */
function netnsOf(pid: number): string {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return '';
  }
}

/** Samples the copies of every instance whose command carries `[marker/<name>]`, on every host. */
export class CopySampler {
  readonly violations: string[] = [];
  samples = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly hostOf = new Map<string, string>();
  private readonly pattern: RegExp;

  constructor(marker: string, net: TestNet, hosts: string[]) {
    for (const h of hosts) this.hostOf.set(`net:[${fs.statSync(`/run/netns/${net.host(h).netns}`).ino}]`, h);
    this.pattern = new RegExp(`\\[${marker}/([^\\]]+)\\]`);
    this.timer = setInterval(() => this.sample(), 25);
  }

  /** Instance name → the hosts of its distinct sessions, now. */
  copies(): Map<string, string[]> {
    const sessions = new Map<string, Map<number, string>>();
    for (const e of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      const pid = Number(e);
      let cmd: string;
      try {
        cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      const name = this.pattern.exec(cmd)?.[1];
      const stat = name ? readProcStat(pid) : undefined;
      if (!name || !isLive(stat)) continue;
      const of = sessions.get(name) ?? new Map<number, string>();
      of.set(stat.session, this.hostOf.get(netnsOf(pid)) ?? 'unknown host');
      sessions.set(name, of);
    }
    return new Map([...sessions].map(([name, s]) => [name, [...s.values()]]));
  }

  private sample(): void {
    this.samples++;
    for (const [name, hosts] of this.copies()) {
      if (hosts.length > 1) this.violations.push(`${new Date().toISOString()} ${name}: ${hosts.length} copies, on ${hosts.join(', ')}`);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Creates ConfigMaps `<prefix>-<n>` without pause (a few at a time); remembers every acknowledged one. */
export class AckedWriter {
  readonly acked = new Map<string, string>();
  attempts = 0;
  private running = true;
  private readonly loops: Promise<void>[];
  private readonly api: CoreV1Api;
  private next = 0;

  constructor(kc: KubeConfig, private readonly namespace: string, private readonly prefix: string, concurrency = 4) {
    this.api = kc.makeApiClient(CoreV1Api);
    this.loops = Array.from({ length: concurrency }, () => this.loop());
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const name = `${this.prefix}-${this.next++}`;
      const value = `${name}@${Date.now()}`;
      this.attempts++;
      try {
        await this.api.createNamespacedConfigMap({ namespace: this.namespace, body: { metadata: { name }, data: { value } } });
        this.acked.set(name, value);
      } catch {
        await new Promise((r) => setTimeout(r, 100)); // refused or cut: an unacknowledged write, allowed to be lost
      }
    }
  }

  /** Stops writing; waits (bounded) for the writes in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.race([Promise.all(this.loops), new Promise((r) => setTimeout(r, 15_000))]);
  }

  /** Acknowledged writes that are missing or changed now. */
  async lost(): Promise<string[]> {
    const acked = [...this.acked]; // those acknowledged before the list began: every one must be in it
    const present = await retryingUnavailable(() => this.listed());
    return acked.filter(([name, value]) => present.get(name) !== value).map(([name]) => name);
  }

  private async listed(): Promise<Map<string, string | undefined>> {
    const present = new Map<string, string | undefined>();
    let _continue: string | undefined;
    do {
      const page = await this.api.listNamespacedConfigMap({ namespace: this.namespace, limit: 1000, _continue });
      for (const cm of page.items) present.set(cm.metadata!.name!, cm.data?.value);
      _continue = page.metadata?._continue;
    } while (_continue);
    return present;
  }
}

/**
 * A read the API may answer 503 for a moment (an etcd election after a member's cut; seen at the end of
 * seed 5151's partition trials): retried for a while, as clients do on its Retry-After. No verdict on the data.
 */
async function retryingUnavailable<T>(read: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await read();
    } catch (err) {
      if ((err as { code?: number }).code !== 503 || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Watches a collection and re-watches from the last resourceVersion whenever the stream ends; flags any version that goes back. */
export class RvMonitor {
  readonly violations: string[] = [];
  events = 0;
  reconnects = 0;
  private last = 0n;
  private running = true;
  private request: { destroy(): void } | undefined;
  private readonly done: Promise<void>;

  constructor(private readonly kc: KubeConfig, private readonly path: string) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.watchOnce().catch(() => undefined);
      if (this.running) {
        this.reconnects++;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** GET `query` on the collection; the response, once its status is 200. */
  private get(query: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = kubeGet(this.kc, `${this.path}?${query}`, {}, (res) => {
        if (res.statusCode !== 200) return (res.resume(), reject(new Error(`GET ${this.path}: HTTP ${res.statusCode}`)));
        resolve(res);
      });
      this.request = req;
      req.on('error', reject);
    });
  }

  /** A watch begins where a list ends, as an informer's does (a watch from nothing replays the present in no order). */
  private async listVersion(): Promise<bigint> {
    const res = await this.get('limit=1');
    let body = '';
    for await (const chunk of res) body += chunk;
    return BigInt((JSON.parse(body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
  }

  private async watchOnce(): Promise<void> {
    if (this.last === 0n) this.last = await this.listVersion();
    const res = await this.get(`watch=true&allowWatchBookmarks=true&resourceVersion=${this.last}`);
    return new Promise((resolve, reject) => {
      onLines(res, (line) => this.onLine(line));
      res.on('end', resolve).on('close', resolve).on('error', reject);
    });
  }

  private onLine(line: string): void {
    const e = JSON.parse(line) as { type: string; object: { metadata?: { name?: string; resourceVersion?: string }; code?: number } };
    if (e.type === 'ERROR') {
      this.last = 0n; // 410 Gone: start again from a fresh list, as an informer would
      return;
    }
    const rv = BigInt(e.object.metadata?.resourceVersion ?? '0');
    if (e.type !== 'BOOKMARK') this.events++;
    if (e.type !== 'BOOKMARK' ? rv <= this.last : rv < this.last) this.violations.push(`${e.type} ${e.object.metadata?.name} at ${rv} after ${this.last}`);
    this.last = rv > this.last ? rv : this.last;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.request?.destroy();
    await this.done;
  }
}

/** Failures the report shows without a reason, a message or a hint. */
export async function failuresWithoutHelp(client: CairnClient, namespace: string): Promise<{ failures: Failure[]; unhelpful: Failure[] }> {
  const list = async <K extends 'Cluster' | 'Node' | 'Instance' | 'Volume' | 'WorkItem'>(kind: K) => (await client.listAll(kind, { namespace })).items;
  const failures = collectFailures({ clusters: await list('Cluster'), nodes: await list('Node'), instances: await list('Instance'), volumes: await list('Volume'), workItems: await list('WorkItem') });
  return { failures, unhelpful: failures.filter((f) => !f.reason || !f.message.trim() || !f.hint.trim()) };
}
