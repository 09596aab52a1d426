import { age } from '../../state/format';

/** A timestamp as its age, with the exact time as a tooltip. */
export function Ago({ iso, now }: { iso: string | undefined; now: number }) {
  if (!iso) return null;
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {age(iso, now)} ago
    </time>
  );
}
