/**
 * Prints where a V8 .cpuprofile spent its time: self time by function and by
 * source file / npm package, and inclusive (on-stack) time by function.
 * Usage: node dist/hack/bench/profile-summary.js <file.cpuprofile> [top=25] [from-to]
 * where from-to (seconds since the profile started, e.g. 12.5-17) limits it to
 * one phase; the benchmark prints each phase's start as `server t+N s`.
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg, windowArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const [fromS, toS] = (windowArg ?? '0-1e9').split('-').map(Number) as [number, number];
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const shortUrl = (url: string) => {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? url.slice(dist + 1) : url.replace(/^file:\/\//, '');
};
const fnKey = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const fileKey = (n: ProfileNode) => {
  const url = n.callFrame.url;
  if (!url) return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return `npm:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  return shortUrl(url);
};

const self = new Map<string, number>();
const selfFile = new Map<string, number>();
const incl = new Map<string, number>();
let total = 0;
let idle = 0;
let at = 0;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i]! / 1e6;
  if (at < fromS || at > toS) continue;
  const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000; // the delta after a sample is the time it stands for
  const node = byId.get(profile.samples[i]!)!;
  total += dt;
  if (node.callFrame.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  self.set(fnKey(node), (self.get(fnKey(node)) ?? 0) + dt);
  selfFile.set(fileKey(node), (selfFile.get(fileKey(node)) ?? 0) + dt);
  const onStack = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) onStack.add(fnKey(byId.get(id)!));
  for (const k of onStack) incl.set(k, (incl.get(k) ?? 0) + dt);
}
const busy = total - idle;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${k}`);
  }
};
console.log(`profile ${(total / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s, idle ${(idle / 1000).toFixed(1)} s (percentages of busy)`);
print('self time by file / package', selfFile);
print('self time by function', self);
print('inclusive time by function', incl);
