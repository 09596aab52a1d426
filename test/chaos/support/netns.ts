/**
 * Several network hosts on one machine, for the chaos suite: each host is a
 * network namespace (`ip netns`) with one veth per network it is on; every
 * network is a bridge inside a switch namespace of its own. All addresses
 * live inside these namespaces (10.<subnet>.<network>.<host>), so nothing
 * touches the machine's own networks. A partition is the host's port on a
 * switch set down: packets stop both ways, connections stall as when a
 * cable is pulled. Processes run on a host through `nsenter --net`, which
 * enters only the network namespace: mounts (gluster's FUSE clients) stay
 * visible to the test, and the pid is the program's own (nsenter execs).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** The networks a host can sit on. */
export type NetworkName = 'lan' | 'etcd';
const NETWORK_INDEX: Record<NetworkName, number> = { lan: 0, etcd: 1 };

function ip(args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** One host: its namespace, and its address on each network it is on. */
export interface Host {
  name: string;
  netns: string;
  addresses: Partial<Record<NetworkName, string>>;
}

/** The namespaces of one test run; `destroy()` kills what runs in them and removes them. */
export class TestNet {
  private readonly hosts = new Map<string, Host>();
  private readonly switchNs: string;
  private readonly ports = new Map<string, string>();

  /** `subnet` picks 10.<subnet>.x.y; `id` prefixes every namespace name (unique per run). */
  constructor(
    private readonly id: string,
    private readonly subnet: number,
  ) {
    this.switchNs = `${id}-sw`;
    ip(['netns', 'add', this.switchNs]);
    for (const net of Object.keys(NETWORK_INDEX)) {
      ip(['-n', this.switchNs, 'link', 'add', `br-${net}`, 'type', 'bridge']);
      ip(['-n', this.switchNs, 'link', 'set', `br-${net}`, 'up']);
    }
  }

  /** Adds a host on `networks` with host number `n` (its address ends in .n on each). */
  addHost(name: string, n: number, networks: NetworkName[]): Host {
    const netns = `${this.id}-${name}`;
    ip(['netns', 'add', netns]);
    ip(['-n', netns, 'link', 'set', 'lo', 'up']);
    const host: Host = { name, netns, addresses: {} };
    for (const net of networks) {
      const inside = `eth${NETWORK_INDEX[net]}`;
      const port = `p${n}${net[0]}`; // names stay within IFNAMSIZ
      ip(['link', 'add', port, 'netns', this.switchNs, 'type', 'veth', 'peer', 'name', inside, 'netns', netns]);
      ip(['-n', this.switchNs, 'link', 'set', port, 'master', `br-${net}`, 'up']);
      const address = `10.${this.subnet}.${NETWORK_INDEX[net]}.${n}`;
      ip(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', inside]);
      ip(['-n', netns, 'link', 'set', inside, 'up']);
      host.addresses[net] = address;
      this.ports.set(`${name}/${net}`, port);
    }
    this.hosts.set(name, host);
    return host;
  }

  host(name: string): Host {
    const h = this.hosts.get(name);
    if (!h) throw new Error(`no host ${name} in this test net`);
    return h;
  }

  /** `[nsenter, --net=…]`: prefix a command with it to run it on `host`. */
  launcher(host: string): string[] {
    return ['nsenter', `--net=/run/netns/${this.host(host).netns}`];
  }

  /** Cuts `host` off `net` (every network it is on by default). */
  cut(host: string, nets: NetworkName[] = ['lan', 'etcd']): void {
    this.setPorts(host, nets, 'down');
  }

  /** Heals what `cut` did. */
  heal(host: string, nets: NetworkName[] = ['lan', 'etcd']): void {
    this.setPorts(host, nets, 'up');
  }

  private setPorts(host: string, nets: NetworkName[], state: 'up' | 'down'): void {
    for (const net of nets) {
      const port = this.ports.get(`${host}/${net}`);
      if (port) ip(['-n', this.switchNs, 'link', 'set', port, state]);
    }
  }

  /** The pids of every process on `host`. */
  pids(host: string): number[] {
    return ip(['netns', 'pids', this.host(host).netns]).split('\n').filter(Boolean).map(Number);
  }

  /** SIGKILLs everything still running on the hosts and removes every namespace. */
  destroy(): void {
    for (const h of this.hosts.values()) {
      for (const pid of this.pids(h.name)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    for (const ns of [...[...this.hosts.values()].map((h) => h.netns), this.switchNs]) {
      try {
        ip(['netns', 'del', ns]);
      } catch {
        // already gone
      }
    }
    this.hosts.clear();
  }
}

/** Removes namespaces a previous run of the suite left (its process gone: `<prefix><pid>-…`). */
export function removeStaleNamespaces(prefix: string): void {
  const names = fs.existsSync('/run/netns') ? fs.readdirSync('/run/netns') : [];
  for (const ns of names) {
    const m = new RegExp(`^${prefix}(\\d+)-`).exec(ns);
    if (!m || fs.existsSync(`/proc/${m[1]}`)) continue;
    for (const pid of ip(['netns', 'pids', ns]).split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    ip(['netns', 'del', ns]);
  }
}
