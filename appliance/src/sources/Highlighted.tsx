import type { Ref } from 'preact';
import type { Span } from './locate';

interface Props {
  text: string;
  span: Span | null;
  markRef?: Ref<HTMLElement>;
  class?: string;
}

/** Untrusted text as text nodes, with one span of it marked. */
export function Highlighted({ text, span, markRef, class: className }: Props) {
  if (!span) return <span class={className}>{text}</span>;
  return (
    <span class={className}>
      {text.slice(0, span[0])}
      <mark ref={markRef}>{text.slice(span[0], span[1])}</mark>
      {text.slice(span[1])}
    </span>
  );
}
