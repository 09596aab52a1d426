/**
 * Kubernetes label selectors, ported from apimachinery's pkg/labels
 * (selector.go) so that what kubectl and client-go send parses — and fails,
 * with the same messages — as it would against a real apiserver. Shared by
 * the apiserver (filtering lists and watches) and the CLI (filtering manifests by `-l`).
 *
 * Pure and synchronous. The lexer deliberately mirrors Go's byte reader,
 * quirks included: a NUL character ends the token it is in and, where a
 * token would start, the whole input — so `"a=b\0"` parses as `a=b` and
 * `"\0(("` as the empty selector, exactly as upstream.
 */
import { labelKeyErrors, labelValueErrors } from './label-validation.js';
import { SelectorError } from './selector-error.js';

/** Operators of a label requirement, spelled as apimachinery's `selection.Operator`. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One AND-ed term of a label selector; `values` are sorted and de-duplicated. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/** A parsed label selector, ready to test objects' `metadata.labels`. */
export interface LabelSelector {
  /** The requirements, sorted by key as apimachinery keeps them. */
  readonly requirements: readonly LabelRequirement[];
  /** True when the selector selects everything. */
  readonly empty: boolean;
  /** Whether an object carrying `labels` (absent = no labels) is selected. */
  matches(labels?: Record<string, string>): boolean;
  /** The canonical text, e.g. `a=b,c in (d,e)`, as apimachinery prints it. */
  toString(): string;
}

const GO_ESCAPES: Record<string, string> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v',
};

// Go's %q, close enough for error messages about user input.
function goQuote(s: string): string {
  const body = s
    .replace(/[\\"]/g, (c) => `\\${c}`)
    .replace(/[\x00-\x1f\x7f]/g, (c) => GO_ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `"${body}"`;
}

// ---- integers for the gt / lt operators (Go's strconv.ParseInt(s, 10, 64)) --

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

// ---- lexer ------------------------------------------------------------------

type TokenKind = 'end' | 'error' | 'id' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '<' | '>' | 'in' | 'notin';

interface Token {
  readonly kind: TokenKind;
  readonly literal: string;
}

const SYMBOLS: ReadonlySet<string> = new Set(['(', ')', ',', '!', '=', '==', '!=', '<', '>']);
const END = '\0';

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSpecial(ch: string): boolean {
  return ch === '=' || ch === '!' || ch === '(' || ch === ')' || ch === ',' || ch === '>' || ch === '<';
}

class Lexer {
  private pos = 0;

  constructor(private readonly s: string) {}

  next(): Token {
    let ch = this.read();
    while (isWhitespace(ch)) ch = this.read();
    if (ch === END) return { kind: 'end', literal: '' };
    this.pos--;
    return isSpecial(ch) ? this.symbol() : this.word();
  }

  // Like Go's reader: a real NUL is consumed, the end of input is not.
  private read(): string {
    return this.pos < this.s.length ? this.s.charAt(this.pos++) : END;
  }

  private word(): Token {
    let buf = '';
    for (let ch = this.read(); ch !== END; ch = this.read()) {
      if (isSpecial(ch) || isWhitespace(ch)) {
        this.pos--;
        break;
      }
      buf += ch;
    }
    return { kind: buf === 'in' || buf === 'notin' ? buf : 'id', literal: buf };
  }

  // Longest run of symbol characters that still forms an operator ("!=" over "!").
  private symbol(): Token {
    let buf = '';
    let last: Token | undefined;
    for (let ch = this.read(); ch !== END; ch = this.read()) {
      if (!isSpecial(ch)) {
        this.pos--;
        break;
      }
      buf += ch;
      if (SYMBOLS.has(buf)) {
        last = { kind: buf as TokenKind, literal: buf };
      } else if (last) {
        this.pos--;
        break;
      }
    }
    return last ?? { kind: 'error', literal: `error expected: keyword found '${buf}'` };
  }
}

// ---- parser -----------------------------------------------------------------

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

// In a value position the keywords are plain words: `k in (in, notin)`.
type Context = 'operator' | 'values';

function isRequirementStart(t: Token): boolean {
  return t.kind === 'id' || t.kind === '!';
}

class Parser {
  private readonly tokens: Token[] = [];
  private pos = 0;

  constructor(input: string) {
    const lexer = new Lexer(input);
    for (let t = lexer.next(); ; t = lexer.next()) {
      this.tokens.push(t);
      if (t.kind === 'end') break;
    }
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const t = this.lookahead('values');
      if (t.kind === 'end') return requirements;
      if (!isRequirementStart(t)) fail(`found '${t.literal}', expected: !, identifier, or 'end of string'`);
      requirements.push(this.requirement());
      const sep = this.consume('values');
      if (sep.kind === 'end') return requirements;
      if (sep.kind !== ',') fail(`found '${sep.literal}', expected: ',' or 'end of string'`);
      const after = this.lookahead('values');
      if (!isRequirementStart(after)) fail(`found '${after.literal}', expected: identifier after ','`);
    }
  }

  private lookahead(ctx: Context): Token {
    return this.contextual(this.tokens[Math.min(this.pos, this.tokens.length - 1)], ctx);
  }

  private consume(ctx: Context): Token {
    const t = this.lookahead(ctx);
    this.pos++;
    return t;
  }

  private contextual(t: Token, ctx: Context): Token {
    return ctx === 'values' && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'id', literal: t.literal } : t;
  }

  private requirement(): LabelRequirement {
    try {
      const { key, unary } = this.keyAndUnaryOperator();
      if (unary) return newRequirement(key, unary, []);
      const operator = this.operator();
      const values = operator === 'in' || operator === 'notin' ? this.valueSet() : this.exactValue();
      return newRequirement(key, operator, [...values].sort());
    } catch (err) {
      if (err instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${err.message}`, { cause: err });
      throw err;
    }
  }

  // A key followed by ',' or the end is an existence test; '!' before it negates.
  private keyAndUnaryOperator(): { key: string; unary?: LabelOperator } {
    let t = this.consume('values');
    const negated = t.kind === '!';
    if (negated) t = this.consume('values');
    if (t.kind !== 'id') fail(`found '${t.literal}', expected: identifier`);
    const errs = labelKeyErrors(t.literal);
    if (errs.length > 0) fail(`<nil>: Invalid value: ${goQuote(t.literal)}: ${errs.join('; ')}`);
    if (negated) return { key: t.literal, unary: '!' };
    const next = this.lookahead('values').kind;
    return { key: t.literal, unary: next === 'end' || next === ',' ? 'exists' : undefined };
  }

  private operator(): LabelOperator {
    const t = this.consume('operator');
    switch (t.kind) {
      case 'in': case 'notin': case '=': case '==': case '!=':
        return t.kind;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        return fail(`found '${t.literal}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private valueSet(): Set<string> {
    const open = this.consume('values');
    if (open.kind !== '(') fail(`found '${open.literal}' expected: '('`);
    const t = this.lookahead('values');
    if (t.kind === ')') {
      this.consume('values');
      return new Set(['']);
    }
    if (t.kind !== 'id' && t.kind !== ',') fail(`found '${t.literal}', expected: ',', ')' or identifier`);
    const values = this.identifierList();
    this.consume('values');
    return values;
  }

  // Empty items are values too: "(,a)" and "(a,,b)" both contain "".
  private identifierList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const t = this.consume('values');
      if (t.kind === 'id') {
        values.add(t.literal);
        const next = this.lookahead('values');
        if (next.kind === ')') return values;
        if (next.kind !== ',') fail(`found '${next.literal}', expected: ',' or ')'`);
      } else if (t.kind === ',') {
        const next = this.lookahead('values').kind;
        if (values.size === 0 || next === ')' || next === ',') values.add('');
        if (next === ')') return values;
      } else {
        fail(`found '${t.literal}', expected: ',', or identifier`);
      }
    }
  }

  private exactValue(): Set<string> {
    const peek = this.lookahead('values');
    if (peek.kind === 'end' || peek.kind === ',') return new Set(['']);
    const t = this.consume('values');
    if (t.kind !== 'id') fail(`found '${t.literal}', expected: identifier`);
    return new Set([t.literal]);
  }
}

function fail(message: string): never {
  throw new SelectorError(message);
}

// Mirrors apimachinery's NewRequirement: every problem is reported, de-duplicated.
function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: string[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(`values[${i}]: Invalid value: ${goQuote(v)}: for 'Gt', 'Lt' operators, the value must be an integer`);
      }
    });
  }
  values.forEach((v, i) => {
    const valueErrs = labelValueErrors(v);
    if (valueErrs.length > 0) errs.push(`values[${i}][${key}]: Invalid value: ${goQuote(v)}: ${valueErrs.join('; ')}`);
  });
  const unique = [...new Set(errs)];
  if (unique.length === 1) fail(unique[0]);
  if (unique.length > 1) fail(`[${unique.join(', ')}]`);
  return { key, operator, values };
}

// ---- matching and printing ----------------------------------------------------

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  // hasOwn, so that a label key like "constructor" is not found on Object.prototype.
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case '=': case '==': case 'in':
      return has && r.values.includes(value as string);
    case '!=': case 'notin':
      return !has || !r.values.includes(value as string);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt': case 'lt':
      return has && compareInt(r.operator, value as string, r.values[0]);
  }
}

function compareInt(op: 'gt' | 'lt', labelValue: string, bound: string): boolean {
  const actual = parseInt64(labelValue);
  const limit = parseInt64(bound);
  if (actual === undefined || limit === undefined) return false;
  return op === 'gt' ? actual > limit : actual < limit;
}

const PRINTED_OPERATORS: Record<LabelOperator, string> = {
  '=': '=', '==': '==', '!=': '!=', in: ' in ', notin: ' notin ', gt: '>', lt: '<', exists: '', '!': '',
};

function requirementString(r: LabelRequirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return `!${r.key}`;
  const values = r.values.join(',');
  const rhs = r.operator === 'in' || r.operator === 'notin' ? `(${values})` : values;
  return `${r.key}${PRINTED_OPERATORS[r.operator]}${rhs}`;
}

class ParsedLabelSelector implements LabelSelector {
  constructor(readonly requirements: readonly LabelRequirement[]) {}

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  /** Whether `labels` (absent or null: none) satisfy every requirement. */
  matches(labels?: Record<string, string> | null): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels ?? {}));
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

function byKey(a: LabelRequirement, b: LabelRequirement): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Parses a `labelSelector` query parameter like apimachinery's `labels.Parse`; throws {@link SelectorError}. */
export function parseLabelSelector(s: string): LabelSelector {
  const requirements = new Parser(s).parse().sort(byKey);
  return new ParsedLabelSelector(requirements);
}
