import type { ComponentChildren } from 'preact';

/** One label and its value; rows without a value are left out. */
export type Field = [label: string, value: ComponentChildren, testid?: string];

/** A two-column list of an object's fields. */
export function Fields({ rows }: { rows: Field[] }) {
  const shown = rows.filter(([, value]) => value !== undefined && value !== null && value !== '');
  return (
    <dl class="fields">
      {shown.map(([label, value, testid]) => (
        <div class="field" key={label}>
          <dt>{label}</dt>
          <dd data-testid={testid}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
