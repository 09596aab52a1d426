/**
 * A component that re-renders only when a prop changed identity: rows of
 * long lists use it, so a watch event redraws one row, not five hundred.
 * (preact/compat's memo would pull in the whole compat layer.)
 */
import { Component, type FunctionComponent, h } from 'preact';

function sameProps(a: object, b: object): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => (a as Record<string, unknown>)[k] === (b as Record<string, unknown>)[k]);
}

export function memo<P extends object>(render: FunctionComponent<P>): FunctionComponent<P> {
  class Memoized extends Component<P> {
    override shouldComponentUpdate(next: P): boolean {
      return !sameProps(this.props, next);
    }
    override render() {
      return h(render, this.props);
    }
  }
  return Memoized as unknown as FunctionComponent<P>;
}
