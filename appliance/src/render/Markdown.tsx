import { useLayoutEffect, useRef } from 'preact/hooks';
import { renderMarkdown, type RenderOptions } from './markdown';

interface Props extends RenderOptions {
  text: string;
  class?: string;
}

/** Untrusted markdown, sanitised; Preact never touches the element's children, the renderer's fragment replaces them. */
export function Markdown({ text, citation, class: className }: Props) {
  const element = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    element.current?.replaceChildren(renderMarkdown(text, { citation }));
  }, [text, citation]);
  return <div ref={element} class={className ?? 'markdown'} />;
}
