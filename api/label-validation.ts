/**
 * Label key and value syntax, ported from apimachinery's validate/content
 * (`IsLabelKey`, `IsLabelValue`) with its error wording, for the selector
 * parser and for validating objects' `metadata.labels`. Pure.
 */

const NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const NAME_RE = new RegExp(`^${NAME_FMT}$`);
const NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE_FMT = `(${NAME_FMT})?`;
const VALUE_RE = new RegExp(`^${VALUE_FMT}$`);
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN_FMT = `${DNS_LABEL_FMT}(\\.${DNS_LABEL_FMT})*`;
const DNS_SUBDOMAIN_RE = new RegExp(`^${DNS_SUBDOMAIN_FMT}$`);
const DNS_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const MAX_NAME_BYTES = 63;
const MAX_SUBDOMAIN_BYTES = 253;

function regexError(msg: string, re: string, ...examples: string[]): string {
  const eg = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${eg}regex used for validation is '${re}')`;
}

// Limits are in bytes upstream, not UTF-16 code units.
function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function subdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > MAX_SUBDOMAIN_BYTES) errs.push(`must be no more than ${MAX_SUBDOMAIN_BYTES} bytes`);
  if (!DNS_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS_SUBDOMAIN_MSG, DNS_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

function prefixErrors(prefix: string): string[] {
  if (prefix.length === 0) return ['prefix part must be non-empty'];
  return subdomainErrors(prefix).map((e) => `prefix part ${e}`);
}

/** Why `key` is not a valid label key (`[prefix/]name`); empty when it is valid. */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) {
    return [
      `a valid label key ${regexError(NAME_MSG, NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  const name = parts[parts.length - 1];
  const errs = parts.length === 2 ? prefixErrors(parts[0]) : [];
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > MAX_NAME_BYTES) errs.push(`name part must be no more than ${MAX_NAME_BYTES} bytes`);
  if (!NAME_RE.test(name)) errs.push(`name part ${regexError(NAME_MSG, NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** Why `value` is not a valid label value; empty when it is valid. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > MAX_NAME_BYTES) errs.push(`must be no more than ${MAX_NAME_BYTES} bytes`);
  if (!VALUE_RE.test(value)) errs.push(regexError(VALUE_MSG, VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}
