/** The report of suite-cpu.ts: the hook's log (process-cpu-hook.ts) added up by process kind. Pure. */

/** One logged process: CPU and wall seconds, command line. */
export interface ProcessRecord {
  cpu: number;
  wall: number;
  argv: string;
}

/** The kind a process is counted under: the mocha runs, `cairn <command>`, the operation workers, or other. */
export function processKind(argv: string): string {
  if (/\bmocha\b/.test(argv)) return 'mocha (tests, and all they run in-process)';
  const cairn = /\bcairn\.js (\S+)/.exec(argv) ?? /\bcli\/main\.js (\S+)/.exec(argv);
  if (cairn) return `cairn ${cairn[1]}`;
  if (/operations\/worker\.js/.test(argv)) return 'agent operation workers';
  if (/\bvitest\b/.test(argv)) return 'vitest (dashboard tests)';
  return 'other Node.js processes';
}

/** The records of a hook log: tab-separated CPU s, wall s, command line. */
export function parseRecords(text: string): ProcessRecord[] {
  return text.split('\n').flatMap((line) => {
    const [cpu, wall, argv] = line.split('\t');
    return cpu && wall && argv !== undefined ? [{ cpu: Number(cpu), wall: Number(wall), argv }] : [];
  });
}

/** CPU seconds and process count per kind, largest first. */
export function byKind(records: readonly ProcessRecord[]): { kind: string; cpu: number; count: number }[] {
  const kinds = new Map<string, { cpu: number; count: number }>();
  for (const r of records) {
    const k = kinds.get(processKind(r.argv)) ?? { cpu: 0, count: 0 };
    kinds.set(processKind(r.argv), { cpu: k.cpu + r.cpu, count: k.count + 1 });
  }
  return [...kinds].map(([kind, v]) => ({ kind, ...v })).sort((a, b) => b.cpu - a.cpu);
}
