/**
 * The cluster the chaos suite breaks, every part a real process on a host
 * of its own (netns.ts): three etcd members (hosts e1–e3, on the etcd
 * network), one apiserver and two controller replicas (host cp, on both
 * networks), and agents (hosts n1…, on the lan), each started, killed -9
 * and started again by name. The test process reaches the apiserver
 * through host-port.ts; its clients use a copy of the admin kubeconfig
 * pointing there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { CONTROLLER_LEASE_NAME, SYSTEM_NAMESPACE } from '../../../api/names.js';
import { CLOCK_TICKS_PER_SECOND, readProcStat } from '../../../agent/drivers/process/proc.js';
import { stopChild } from '../../../apiserver/etcd/process.js';
import { procCpuSeconds } from '../../../hack/bench/lib.js';
import { spawnCairn, type CairnProcess } from '../../../hack/cairn-process.js';
import { killGlusterUnder } from '../../../hack/gluster-cleanup.js';
import { cmdline, killMarked, startAgentProcess, type AgentProcess } from '../../support/agent-process.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest } from '../../support/http.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { forwardHostPort, type HostPort } from './host-port.js';
import { removeStaleNamespaces, TestNet } from './netns.js';

const PREFIX = 'cchaos';
const ETCD_MEMBERS = ['e1', 'e2', 'e3'];
const API_PORT = 6443;

/** What the suite asks for. */
export interface ChaosClusterOptions {
  agents: number;
  /** Marker in every instance command, to find and kill their processes. */
  marker: string;
  /**
   * Wall-clock offsets (libfaketime's FAKETIME, e.g. `+1h`) of control-plane processes: `apiserver`, `c1`,
   * `c2`. Not of agents: an instance and its fencing watchdog start with a clean environment, so faking an
   * agent's clock alone would split one machine's clock in two, which no real machine has.
   */
  clockOffsets?: Partial<Record<'apiserver' | 'c1' | 'c2', string>>;
}

/** libfaketime, from Debian's faketime (hack/install-faketime.sh). */
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/**
 * The environment of a process whose wall clock is off by `offset`. The
 * monotonic clock stays true, as on a real machine whose clock was set wrong:
 * timers and intervals run at the real rate.
 */
function skewedEnv(offset: string | undefined): NodeJS.ProcessEnv {
  if (!offset) return process.env;
  if (!fs.existsSync(LIBFAKETIME)) throw new Error(`${LIBFAKETIME} is missing: install Debian's faketime (bash hack/install-faketime.sh)`);
  return { ...process.env, LD_PRELOAD: LIBFAKETIME, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1', FAKETIME_NO_CACHE: '1' };
}

/** The running cluster; every part can be killed and started again. */
export class ChaosCluster {
  readonly etcd = new Map<string, ChildProcess>();
  readonly controllers = new Map<string, CairnProcess>();
  /** The logs of controller processes that exited (killed, or self-exited and restarted), per replica. */
  private readonly pastControllerLogs = new Map<string, string[]>();
  readonly agents = new Map<string, AgentProcess>();
  /** Processes that exited by themselves and were started again, as a supervisor would. */
  readonly selfExits: string[] = [];
  /** Processes that exited by themselves and are not restarted: each fails the run. */
  readonly crashes: string[] = [];
  private destroyed = false;
  apiserver!: ServerProcess;
  client!: CairnClient;
  kubeConfig!: KubeConfig;
  private forward!: HostPort;
  private readonly dataDir: string;

  private constructor(
    readonly net: TestNet,
    readonly dir: string,
    private readonly o: ChaosClusterOptions,
  ) {
    this.dataDir = path.join(dir, 'server');
  }

  /** Builds the hosts and starts every part; resolves once the agents' Nodes are Ready. */
  static async start(o: ChaosClusterOptions, cluster: string): Promise<ChaosCluster> {
    if (process.getuid?.() !== 0) throw new Error('the chaos suite makes network namespaces (ip netns) and veth pairs: run it as root, or in a container with CAP_NET_ADMIN and CAP_SYS_ADMIN');
    removeStaleNamespaces(PREFIX);
    const net = new TestNet(`${PREFIX}${process.pid}`, 100 + (process.pid % 100));
    const c = new ChaosCluster(net, fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-chaos-')), o);
    try {
      await c.build(cluster);
    } catch (err) {
      await c.destroy();
      throw err;
    }
    return c;
  }

  private async build(cluster: string): Promise<void> {
    ETCD_MEMBERS.forEach((m, i) => this.net.addHost(m, 11 + i, ['etcd']));
    this.net.addHost('cp', 1, ['lan', 'etcd']);
    for (const n of this.nodeNames()) this.net.addHost(n, 20 + Number(n.slice(1)), ['lan']);
    for (const m of ETCD_MEMBERS) this.startEtcd(m);
    await this.startApiserver();
    this.forward = await forwardHostPort(this.net.launcher('cp'), path.join(this.dir, 'apiserver.sock'), '127.0.0.1', API_PORT);
    const kubeconfig = path.join(this.dir, 'test.kubeconfig');
    fs.writeFileSync(kubeconfig, fs.readFileSync(this.apiserver.kubeconfig, 'utf8').replace(`127.0.0.1:${API_PORT}`, this.forward.local));
    this.kubeConfig = loadKubeConfig({ kubeconfig });
    this.client = new CairnClient(this.kubeConfig, 'chaos-test');
    await this.client.create('Cluster', { metadata: { name: cluster }, spec: {} });
    for (const id of ['c1', 'c2']) await this.startController(id);
    for (const n of this.nodeNames()) await this.startAgent(n, cluster);
    await eventually(`${this.o.agents} Ready nodes`, async () => (await this.client.list('Node', { namespace: cluster })).items.filter((n) => n.status?.phase === 'Ready').length === this.o.agents, 60_000, 200);
  }

  /** n1, n2, … */
  nodeNames(): string[] {
    return Array.from({ length: this.o.agents }, (_, i) => `n${i + 1}`);
  }

  private etcdUrl(member: string, port: number): string {
    return `http://${this.net.host(member).addresses.etcd}:${port}`;
  }

  private etcdEndpoints(): string {
    return ETCD_MEMBERS.map((m) => this.etcdUrl(m, 2379)).join(',');
  }

  /** Starts (or starts again, on its data dir) one etcd member. */
  startEtcd(member: string): void {
    const initialCluster = ETCD_MEMBERS.map((m) => `${m}=${this.etcdUrl(m, 2380)}`).join(',');
    const log = fs.openSync(path.join(this.dir, `${member}.log`), 'a');
    const [cmd, ...pre] = this.net.launcher(member);
    const child = spawn(cmd!, [...pre, 'etcd', '--name', member, '--data-dir', path.join(this.dir, member),
      '--listen-client-urls', this.etcdUrl(member, 2379), '--advertise-client-urls', this.etcdUrl(member, 2379),
      '--listen-peer-urls', this.etcdUrl(member, 2380), '--initial-advertise-peer-urls', this.etcdUrl(member, 2380),
      '--initial-cluster', initialCluster, '--initial-cluster-token', 'chaos', '--log-level', 'warn'], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.etcd.set(member, child);
  }

  /** Starts (or starts again, on its data dir and port) the apiserver on cp. */
  async startApiserver(): Promise<void> {
    const proc = await startServerProcess({
      dataDir: this.dataDir, port: API_PORT, etcdEndpoints: this.etcdEndpoints(), launcher: this.net.launcher('cp'), env: skewedEnv(this.o.clockOffsets?.apiserver),
      extraArgs: ['--listen', '0.0.0.0', '--advertise-address', this.net.host('cp').addresses.lan!],
    });
    this.apiserver = proc;
    // Nothing restarts an apiserver that exits by itself (trials kill it with a signal): that is a crash.
    proc.child.once('exit', (code, signal) => {
      if (!signal && !this.destroyed) this.crashes.push(`the apiserver exited by itself (status ${code}): ${proc.logs().trim().split('\n').slice(-12).join('\n')}`);
    });
  }

  /** Starts controller replica `id` on cp, with short leader-election timings so a takeover fits a trial. */
  async startController(id: string): Promise<void> {
    // At info level: when a trial is slow or fails, what the controllers decided is what explains it.
    const args = ['controller', '--kubeconfig', path.join(this.dataDir, 'admin.kubeconfig'), '--identity', id, '--metrics-port', '0',
      '--lease-duration', '6s', '--renew-deadline', '4s', '--retry-period', '1s', '--log-level', 'info'];
    const previous = this.controllers.get(id);
    if (previous) this.pastControllerLogs.set(id, [...(this.pastControllerLogs.get(id) ?? []), previous.logs()]);
    const proc = spawnCairn(args, [], skewedEnv(this.o.clockOffsets?.[id as 'c1' | 'c2']), this.net.launcher('cp'));
    this.controllers.set(id, proc);
    // A controller that loses its leader lease exits for its supervisor to start it again as a follower:
    // this is that supervisor (systemd's Restart=on-failure). Kills by the trials and destroy() are signals.
    proc.child.once('exit', (code, signal) => {
      if (signal || this.destroyed || this.controllers.get(id) !== proc) return;
      this.selfExits.push(`controller ${id} (status ${code})`);
      setTimeout(() => {
        if (!this.destroyed && this.controllers.get(id) === proc) void this.startController(id);
      }, 1000);
    });
  }

  /** Starts (or starts again, on its data dir) the agent of `node`. */
  async startAgent(node: string, cluster: string): Promise<void> {
    this.agents.set(node, await startAgentProcess({
      kubeconfig: path.join(this.dataDir, 'admin.kubeconfig'), server: `https://${this.net.host('cp').addresses.lan}:${API_PORT}`,
      cluster, nodeName: node, dataDir: path.join(this.dir, 'agents', node), heartbeatInterval: '2s', leaseDuration: '10s', launcher: this.net.launcher(node),
    }));
  }

  /** The controller replica holding the leader lease, if any. */
  async leader(): Promise<string | undefined> {
    const lease = await this.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: SYSTEM_NAMESPACE, name: CONTROLLER_LEASE_NAME }).catch(() => undefined);
    return lease?.spec?.holderIdentity ?? undefined;
  }

  /** Live processes on `host` whose command line contains `needle`. */
  processesOn(host: string, needle: string): number[] {
    return this.net.pids(host).filter((pid) => cmdline(pid).includes(needle));
  }

  /**
   * Log lines of the running controllers and agents that say a TLS handshake failed (a certificate not
   * yet valid, say): a clock skew beyond the bound docs/fencing.md states, which would leave a replica
   * silently unable to reach the API server.
   */
  tlsFailures(): string[] {
    const logs = [...this.controllers.values(), ...this.agents.values()].map((p) => p.logs());
    return logs.flatMap((l) => l.split('\n').filter((line) => /certificate (is not yet valid|has expired)|self[- ]signed certificate|unable to verify/.test(line))).slice(0, 3);
  }

  /**
   * Keeps what explains a failed trial outside the cluster's dir (destroy() removes that): every
   * process's log, the WorkItems, Nodes and Leases as the API has them, and /readyz. Resolves the dir it wrote.
   */
  async saveDiagnostics(label: string): Promise<string> {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), `cairn-chaos-failure-${label}-`));
    const save = (name: string, text: string) => fs.writeFileSync(path.join(out, name), text);
    for (const [node, a] of this.agents) save(`agent-${node}.log`, a.logs());
    for (const [id, c] of this.controllers) save(`controller-${id}.log`, [...(this.pastControllerLogs.get(id) ?? []), c.logs()].join('--- the process exited; its replacement logs from here ---\n'));
    save('apiserver.log', this.apiserver?.logs() ?? '');
    for (const m of ETCD_MEMBERS) fs.copyFileSync(path.join(this.dir, `${m}.log`), path.join(out, `${m}.log`));
    const items = await this.client.listAll('WorkItem').catch((err: Error) => ({ items: [], error: err.message }));
    save('workitems.json', JSON.stringify(items, null, 1));
    const nodes = await this.client.listAll('Node').catch((err: Error) => ({ items: [], error: err.message }));
    save('nodes.json', JSON.stringify(nodes, null, 1));
    const leases = await this.kubeConfig.makeApiClient(CoordinationV1Api).listLeaseForAllNamespaces().catch((err: Error) => ({ items: [], error: err.message }));
    save('leases.json', JSON.stringify(leases, null, 1));
    const events = await this.kubeConfig.makeApiClient(CoreV1Api).listEventForAllNamespaces().catch((err: Error) => ({ items: [], error: err.message }));
    save('events.json', JSON.stringify(events, null, 1));
    // A controller that spins (its CPU time close to its age) starves its own lease renewals and reconciles.
    save('controllers-cpu.txt', [...this.controllers].map(([id, p]) => `${id} pid ${p.child.pid}: ${cpuAndAge(p.child.pid)}`).join('\n') + '\n');
    // Whether the apiserver's watch cache keeps up with etcd (what every informer is fed from).
    const readyz = await rawRequest(this.kubeConfig, { path: '/readyz' }).then((r) => `${r.status} ${r.text}`, (err: Error) => `not read: ${err.message}`);
    save('apiserver-readyz.txt', `${readyz}\n`);
    return out;
  }

  /** Stops everything, removes the hosts, mounts and files. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    for (const a of this.agents.values()) await a.kill9().catch(() => undefined);
    for (const c of this.controllers.values()) await stopChild(c.child, 0).catch(() => undefined);
    await this.apiserver?.kill9().catch(() => undefined);
    for (const e of this.etcd.values()) await stopChild(e, 0).catch(() => undefined);
    await this.forward?.close();
    killMarked(this.o.marker);
    killGlusterUnder(this.dir);
    this.net.destroy();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A process's CPU time (user + system) and age from /proc, e.g. "cpu 12.3 s over 40.1 s". */
function cpuAndAge(pid: number | undefined): string {
  const stat = pid === undefined ? undefined : readProcStat(pid);
  if (!stat) return 'not running';
  const uptime = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return `cpu ${procCpuSeconds(stat.pid).toFixed(1)} s over ${(uptime - stat.startTicks / CLOCK_TICKS_PER_SECOND).toFixed(1)} s`;
}
