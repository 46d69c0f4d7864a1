import { Component, type FunctionComponent, h } from 'preact';

/** Renders again only when a prop changed (by identity): long lists of finished items stay untouched. */
export function memo<P extends object>(inner: FunctionComponent<P>): FunctionComponent<P> {
  class Memo extends Component<P> {
    shouldComponentUpdate(next: P): boolean {
      const before = this.props as Record<string, unknown>;
      const after = next as Record<string, unknown>;
      const keys = Object.keys(after);
      return keys.length !== Object.keys(before).length || keys.some((key) => before[key] !== after[key]);
    }
    render() {
      return h(inner, this.props);
    }
  }
  return Memo as unknown as FunctionComponent<P>;
}
