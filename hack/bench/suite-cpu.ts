/**
 * Where the test suite's time goes (issue 19: `npm test` ≤ 10 min on 2 cores). Runs a command (by
 * default `bash hack/test.sh`, the suite as CI runs it) with process-cpu-hook.js preloaded into every
 * Node.js process, then prints the wall time, the CPU the whole machine spent meanwhile (so run it on
 * an otherwise idle machine), and that CPU by process kind: the mocha runs (the tests themselves and
 * everything they run in-process), each `cairn` command, the agents' operation workers, other Node.js
 * processes, and the rest (etcd, kubectl, gluster, qemu, Python, Chromium, and Node.js processes
 * killed with SIGKILL, which log nothing). The suite cannot finish sooner than its CPU over the cores.
 *
 * Usage: `npm run bench:suite [-- <command> <args...>]`, e.g.
 * `npm run bench:suite -- npx mocha --exit 'dist/test/integration/**\/*.test.js'`.
 * Exit status: that of the command.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, machineBusySeconds } from './lib.js';
import { byKind, parseRecords } from './suite-cpu-report.js';

function main(): number {
  const command = process.argv.slice(2);
  const [program, ...args] = command.length > 0 ? command : ['bash', 'hack/test.sh'];
  const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-suite-cpu-')), 'processes.log');
  const hook = path.join(path.dirname(fileURLToPath(import.meta.url)), 'process-cpu-hook.js');
  const nodeOptions = [process.env.NODE_OPTIONS, `--import "${hook}"`].filter(Boolean).join(' ');
  const busyBefore = machineBusySeconds();
  const started = Date.now();
  const run = spawnSync(program!, args, { stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: nodeOptions, CAIRN_PROCESS_CPU_LOG: logFile } });
  const wall = (Date.now() - started) / 1000;
  const busy = machineBusySeconds() - busyBefore;
  const records = parseRecords(fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  fs.rmSync(path.dirname(logFile), { recursive: true, force: true });
  const logged = records.reduce((s, r) => s + r.cpu, 0);
  const cores = os.availableParallelism();
  console.log(`\n${[program, ...args].join(' ')}: exit ${run.status ?? run.signal}`);
  console.log(`wall ${fmt(wall, 1)} s; machine CPU ${fmt(busy, 1)} s on ${cores} cores (${fmt((100 * busy) / (wall * cores))} % busy), so at least ${fmt(busy / cores, 1)} s of wall`);
  console.log('CPU s  processes  kind');
  for (const k of byKind(records)) console.log(`${fmt(k.cpu, 1).padStart(6)}  ${String(k.count).padStart(9)}  ${k.kind}`);
  console.log(`${fmt(Math.max(0, busy - logged), 1).padStart(6)}  ${'-'.padStart(9)}  the rest: etcd, kubectl, gluster, qemu, Python, Chromium, processes killed with SIGKILL`);
  return run.status ?? 1;
}

process.exitCode = main();
