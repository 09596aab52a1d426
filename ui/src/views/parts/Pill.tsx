import { toneOf, type Tone } from '../../state/tones';

/** A phase, state or status as a coloured pill. */
export function Pill({ word, tone, title }: { word: string | undefined; tone?: Tone; title?: string }) {
  const text = word ?? 'Unknown';
  return (
    <span class={`pill pill-${tone ?? toneOf(text)}`} title={title}>
      {text}
    </span>
  );
}
