/**
 * etcd maintenance for `cairn etcd status|defrag` and the apiserver's alarm
 * monitor: the raised alarms, each member's database size, and freeing
 * space after the NOSPACE alarm the way etcd's own guide does it: compact
 * history, defragment every member, disarm the alarm. Defragmentation
 * blocks the member it runs on, so members go one at a time.
 */
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '../storage/etcd-store.js';
import { loadEtcdCredentials, type EtcdTlsFiles } from './client-tls.js';

/** A client of one member, named by its endpoint (defragmentation and status are per member). */
export interface MemberClient {
  endpoint: string;
  client: Etcd3;
}

/** One member's state as it reports it. */
export interface MemberStatus {
  endpoint: string;
  memberId: string;
  version: string;
  /** Bytes of the backend file: what etcd compares with --quota-backend-bytes. */
  dbSize: number;
  /** Bytes in use in it; the rest is what defragmentation gives back. */
  dbSizeInUse: number;
}

/** What reclaimSpace did. */
export interface ReclaimReport {
  /** The revision history was compacted up to. */
  compactedTo: number;
  before: MemberStatus[];
  after: MemberStatus[];
  /** The members whose NOSPACE alarm was disarmed. */
  disarmed: string[];
}

/** A client per endpoint, each talking to that member alone; close() ends them all. */
export function openMembers(endpoints: string[], tls: EtcdTlsFiles = {}): { members: MemberClient[]; close(): void } {
  const credentials = loadEtcdCredentials(tls, endpoints);
  const members = endpoints.map((endpoint) => ({ endpoint, client: new Etcd3({ hosts: endpoint, credentials }) }));
  return { members, close: () => members.forEach((m) => m.client.close()) };
}

/** The alarms raised on any member, as etcd names them (NOSPACE, CORRUPT), one per member and alarm. */
export async function raisedAlarms(client: Etcd3, timeoutMs = 5000): Promise<{ memberId: string; alarm: string }[]> {
  const res = await client.maintenance.alarm({ action: 'Get', memberID: 0, alarm: 'None' }, { deadline: Date.now() + timeoutMs });
  return res.alarms.map((a) => ({ memberId: String(a.memberID), alarm: String(a.alarm).toUpperCase() }));
}

/** The status of the member `m` talks to. */
export async function memberStatus(m: MemberClient): Promise<MemberStatus> {
  const s = await m.client.maintenance.status();
  return { endpoint: m.endpoint, memberId: String(s.header.member_id), version: s.version, dbSize: Number(s.dbSize), dbSizeInUse: Number(s.dbSizeInUse) };
}

/**
 * Frees the space etcd holds for history and deleted data: compacts up to
 * the current revision (watchers resuming from before it get 410 Gone and
 * list again), defragments each member, then disarms NOSPACE alarms. Live
 * objects are untouched: when they alone fill the quota, etcd raises the
 * alarm again at the next write. `progress` hears each step as it ends.
 */
export async function reclaimSpace(members: MemberClient[], progress: (line: string) => void = () => undefined): Promise<ReclaimReport> {
  const first = members[0];
  if (!first) throw new Error('reclaimSpace: no etcd members given');
  const before = await Promise.all(members.map(memberStatus));
  const store = new EtcdStore(first.client);
  const compactedTo = await store.currentRevision();
  await store.compact(compactedTo, true);
  progress(`compacted etcd history up to revision ${compactedTo}`);
  for (const m of members) {
    await m.client.maintenance.defragment();
    progress(`defragmented ${m.endpoint}`);
  }
  const disarmed: string[] = [];
  for (const a of await raisedAlarms(first.client)) {
    if (a.alarm !== 'NOSPACE') continue;
    await first.client.maintenance.alarm({ action: 'Deactivate', memberID: a.memberId, alarm: 'Nospace' });
    disarmed.push(a.memberId);
    progress(`disarmed the NOSPACE alarm of member ${memberIdHex(a.memberId)}`);
  }
  return { compactedTo, before, after: await Promise.all(members.map(memberStatus)), disarmed };
}

/** A member id as etcd prints it (etcdctl member list, its log): hex; gRPC hands it over in decimal. */
export function memberIdHex(memberId: string): string {
  return BigInt(memberId).toString(16);
}
