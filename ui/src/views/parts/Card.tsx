import type { ComponentChildren } from 'preact';

interface CardProps {
  title: string;
  /** Sit at the right of the title. */
  actions?: ComponentChildren;
  children: ComponentChildren;
  testid?: string;
  /** Take a whole row of a grid. */
  wide?: boolean;
}

/** A titled panel. */
export function Card({ title, actions, children, testid, wide }: CardProps) {
  return (
    <section class={wide ? 'card wide' : 'card'} data-testid={testid}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions && <div class="card-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

/** A muted line standing in for an empty list. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}
