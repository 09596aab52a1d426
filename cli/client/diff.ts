/**
 * The file side of `cairn diff`, as kubectl diff lays it out: each object's
 * live state and the state a server-side dry-run apply would leave go to two
 * temp dirs (LIVE-xxxx/ and MERGED-xxxx/, one file per object named
 * group.version.Kind.namespace.name), and the system's `diff -u -N` — or
 * $CAIRN_EXTERNAL_DIFF / $KUBECTL_EXTERNAL_DIFF — compares the dirs. Its exit
 * code is the verdict: 0 the same, 1 different, more an error.
 *
 * The files leave out what apply can never change and the server rewrites on
 * every write: metadata.managedFields, resourceVersion, generation,
 * creationTimestamp, uid, and the whole status (the main endpoint ignores it,
 * the controller keeps rewriting it). kubectl compares whole objects, which
 * on Cairn would show a diff on every run for a generation bump or a status
 * heartbeat; what is left is exactly what the apply would change.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import type { ResourceInfo } from './catalog.js';
import { CliError } from './errors.js';
import type { ApiObject } from './watch.js';

/** One object's two sides, as file contents (undefined: the object does not exist on that side). */
export interface DiffPair {
  file: string;
  live?: string;
  merged?: string;
}

const SERVER_BOOKKEEPING = ['managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid'];

/** kubectl's name of an object's file: `cairn.dev.v1alpha1.Instance.demo.web` (`v1.Namespace..x` for the core group). */
export function diffFileName(r: ResourceInfo, namespace: string | undefined, name: string): string {
  return `${r.group ? `${r.group}.` : ''}${r.version}.${r.kind}.${namespace ?? ''}.${name}`;
}

/** An object as YAML with sorted keys, without server bookkeeping and status; undefined stays undefined. */
export function diffYaml(obj: ApiObject | undefined): string | undefined {
  if (!obj) return undefined;
  const { status: _s, ...rest } = obj;
  const metadata = Object.fromEntries(Object.entries(obj.metadata).filter(([k]) => !SERVER_BOOKKEEPING.includes(k)));
  return YAML.stringify({ ...rest, metadata }, { sortMapEntries: true });
}

/** The diff program and its arguments: $CAIRN_EXTERNAL_DIFF, else $KUBECTL_EXTERNAL_DIFF, else `diff -u -N`. */
export function diffProgram(env: NodeJS.ProcessEnv): string[] {
  const external = (env.CAIRN_EXTERNAL_DIFF || env.KUBECTL_EXTERNAL_DIFF || '').trim();
  return external ? external.split(/\s+/) : ['diff', '-u', '-N'];
}

/** Writes the pairs to LIVE-/MERGED- temp dirs, runs the diff program on them (output to ours), removes the dirs; its exit code. */
export function runDiffProgram(pairs: DiffPair[], env: NodeJS.ProcessEnv): number {
  const live = fs.mkdtempSync(path.join(os.tmpdir(), 'LIVE-'));
  let merged: string | undefined;
  try {
    merged = fs.mkdtempSync(path.join(os.tmpdir(), 'MERGED-'));
    for (const p of pairs) {
      if (p.live !== undefined) fs.writeFileSync(path.join(live, p.file), p.live);
      if (p.merged !== undefined) fs.writeFileSync(path.join(merged, p.file), p.merged);
    }
    const [cmd, ...args] = diffProgram(env);
    const run = spawnSync(cmd!, [...args, live, merged], { stdio: ['ignore', 'inherit', 'inherit'], env });
    if (run.error || run.status === null) {
      const why = run.error?.message ?? `killed by ${run.signal}`;
      throw new CliError(`failed to run "${cmd}": ${why}`, 'install diff, or set CAIRN_EXTERNAL_DIFF (or KUBECTL_EXTERNAL_DIFF) to a diff program', 2);
    }
    return run.status;
  } finally {
    fs.rmSync(live, { recursive: true, force: true });
    if (merged) fs.rmSync(merged, { recursive: true, force: true });
  }
}
