import { type Usage, usagePercent } from '../../state/summaries';

/** A capacity bar: how much of a resource is allocated, e.g. cpu 3 / 4. */
export function UsageBar({ label, usage, format }: { label: string; usage: Usage; format: (n: number) => string }) {
  const percent = usagePercent(usage);
  const level = percent === undefined ? 'unknown' : percent > 100 ? 'over' : percent >= 85 ? 'high' : 'ok';
  const text = `${format(usage.used)} / ${usage.total === undefined ? '?' : format(usage.total)}`;
  return (
    <div class="usage" title={percent === undefined ? `${label}: capacity not reported yet` : `${label}: ${percent}% allocated`}>
      <span class="usage-label">{label}</span>
      <span class={`usage-track usage-${level}`}>
        <span class="usage-fill" style={{ width: `${Math.min(percent ?? 0, 100)}%` }} />
      </span>
      <span class="usage-text">{text}</span>
    </div>
  );
}
