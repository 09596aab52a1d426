/**
 * Flags of the client verbs that their definitions need whenever `cairn`
 * starts, kept apart from the modules that act on them (printers.ts and
 * manifests.ts load the yaml parser).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';

/** The `-o` formats of `get`. */
export const OUTPUT_FORMATS = ['table', 'wide', 'yaml', 'json', 'name'] as const;
/** One `-o` format. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Parses `-o`, refusing an unknown format with the allowed ones. */
export function parseOutputFormat(value: string): OutputFormat {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new InvalidArgumentError(`unable to match a printer suitable for the output format "${value}", allowed formats are: ${OUTPUT_FORMATS.join(',')}`);
}

/** Adds kubectl's `-f FILE|DIR|-` (repeatable) and `-R` to a verb; `purpose` completes "the manifests ...". */
export function addFilenameFlags(cmd: Command, purpose: string): Command {
  return cmd
    .option('-f, --filename <file>', `file, directory or - (stdin) holding the manifests ${purpose}; repeatable`, (v: string, prev: string[] = []) => [...prev, v])
    .option('-R, --recursive', 'also read the subdirectories of a -f directory');
}

/** `--dry-run=server|none` → whether the server should only pretend; `client` is refused. */
export function parseDryRun(value: string): boolean {
  if (value === 'server') return true;
  if (value === 'none') return false;
  if (value === 'client') throw new InvalidArgumentError('--dry-run=client is not supported by cairn: use --dry-run=server, which asks the server to validate and admit without storing');
  throw new InvalidArgumentError(`invalid dry-run value ("${value}"). Must be "none" or "server".`);
}

/** kubectl's `--field-manager` of a server-side apply (cairn's own is "cairn", client/apply.ts). */
export function fieldManagerOption(): Option {
  return new Option('--field-manager <name>', 'the field manager to apply as: it owns the fields its manifests set, and a field it set before and no longer sets is removed (default "cairn")');
}

/** kubectl's `--dry-run=server|none` option; `what` says what the server does on a dry run. */
export function dryRunOption(what: string): Option {
  return new Option('--dry-run <strategy>', `"server": ${what}; "none": do it`).argParser(parseDryRun).default(false, 'none');
}
