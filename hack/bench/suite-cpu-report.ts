/** The report of suite-cpu.ts: the hook's log (process-cpu-hook.ts) added up by process kind. Pure. */

/** One logged process: its CPU seconds and command line. */
export interface ProcessRecord {
  cpu: number;
  argv: string;
}

/** The kind a process is counted under: the mocha runs, `cairn <command>`, the operation workers, or other. */
export function processKind(argv: string): string {
  if (/\bmocha\b/.test(argv)) return 'mocha (tests, and all they run in-process)';
  const cairn = /\bcairn\.js (\S+)/.exec(argv) ?? /\bcli\/main\.js (\S+)/.exec(argv);
  if (cairn) return `cairn ${cairn[1]}`;
  if (/(operations|bundle)\/worker\.js/.test(argv)) return 'agent operation workers';
  if (/\bvitest\b/.test(argv)) return 'vitest (dashboard tests)';
  return 'other Node.js processes';
}

/** The records of a hook log: tab-separated CPU seconds and command line. */
export function parseRecords(text: string): ProcessRecord[] {
  return text.split('\n').flatMap((line) => {
    const [cpu, argv] = line.split('\t');
    return cpu && argv !== undefined ? [{ cpu: Number(cpu), argv }] : [];
  });
}

/** CPU seconds and process count per kind, largest first. */
export function byKind(records: readonly ProcessRecord[]): { kind: string; cpu: number; count: number }[] {
  const kinds = new Map<string, { cpu: number; count: number }>();
  for (const r of records) {
    const kind = processKind(r.argv);
    const k = kinds.get(kind) ?? { cpu: 0, count: 0 };
    kinds.set(kind, { cpu: k.cpu + r.cpu, count: k.count + 1 });
  }
  return [...kinds].map(([kind, v]) => ({ kind, ...v })).sort((a, b) => b.cpu - a.cpu);
}
