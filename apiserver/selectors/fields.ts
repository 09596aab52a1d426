/**
 * Kubernetes field selectors, ported from apimachinery's pkg/fields
 * (selector.go `ParseSelector`) so that kubectl's `wait`, `delete` and
 * `describe` queries and the agent's `spec.nodeName=X` watch behave as
 * upstream. Pure and synchronous.
 *
 * One deliberate extension: `\!` is accepted as an escape for `!` in values
 * (upstream rejects it as an invalid escape sequence); an unescaped `!` in a
 * value needs no escaping either way.
 */
import { SelectorError } from '../../api/selector-error.js';

/** One AND-ed term of a field selector (`==` is normalised to `=`). */
export interface FieldRequirement {
  readonly field: string;
  readonly op: '=' | '!=';
  readonly value: string;
}

/** A parsed field selector. */
export interface FieldSelector {
  /** The terms, in apimachinery's order (sorted by their source text). */
  readonly requirements: readonly FieldRequirement[];
  /** True when the selector selects everything. */
  readonly empty: boolean;
  /** Whether an object is selected; `get` returns a field's value, undefined counting as ''. */
  matches(get: (field: string) => string | undefined): boolean;
  /** The distinct field paths the selector reads, so callers can reject unsupported ones. */
  fields(): string[];
  /** The value an `=` term demands of `field`, so a list can be served from an index. */
  exactValue(field: string): string | undefined;
  /** The canonical text, values escaped, as apimachinery prints it. */
  toString(): string;
}

// Checked in this order at every position so "!=" and "==" win over "=".
const OPERATORS = ['!=', '==', '='] as const;
const ESCAPABLE = new Set(['\\', ',', '=', '!']);

// Commas escaped with a backslash stay inside their term, backslash included.
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

// The field part has no escaping: the first operator found splits the term.
function splitTerm(term: string): { field: string; op: (typeof OPERATORS)[number]; raw: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    const op = OPERATORS.find((o) => term.startsWith(o, i));
    if (op) return { field: term.slice(0, i), op, raw: term.slice(i + op.length) };
  }
  return undefined;
}

function unescapeValue(raw: string): string {
  if (!/[\\,=]/.test(raw)) return raw;
  let out = '';
  let inSlash = false;
  for (const c of raw) {
    if (inSlash) {
      if (!ESCAPABLE.has(c)) throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      // Upstream prints the rune with %v, i.e. as its code point number.
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Escapes a literal value for use in a field selector (`\`, `,` and `=`), like apimachinery's `EscapeValue`. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

// Go sorts strings by their UTF-8 bytes, not UTF-16 code units.
function byUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function parseTerm(selector: string, term: string): FieldRequirement | undefined {
  const parts = splitTerm(term);
  if (!parts) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${term}'`);
  const value = unescapeValue(parts.raw);
  // A term with neither field nor value ("=") selects everything upstream.
  if (parts.field === '' && value === '') return undefined;
  return { field: parts.field, op: parts.op === '!=' ? '!=' : '=', value };
}

class ParsedFieldSelector implements FieldSelector {
  constructor(readonly requirements: readonly FieldRequirement[]) {}

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(get: (field: string) => string | undefined): boolean {
    return this.requirements.every((r) => ((get(r.field) ?? '') === r.value) === (r.op === '='));
  }

  fields(): string[] {
    return [...new Set(this.requirements.map((r) => r.field))];
  }

  exactValue(field: string): string | undefined {
    return this.requirements.find((r) => r.op === '=' && r.field === field)?.value;
  }

  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.op}${escapeFieldValue(r.value)}`).join(',');
  }
}

/** Parses a `fieldSelector` query parameter like apimachinery's `fields.ParseSelector`; throws {@link SelectorError}. */
export function parseFieldSelector(s: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const term of splitTerms(s).sort(byUtf8)) {
    if (term === '') continue;
    const r = parseTerm(s, term);
    if (r) requirements.push(r);
  }
  return new ParsedFieldSelector(requirements);
}
