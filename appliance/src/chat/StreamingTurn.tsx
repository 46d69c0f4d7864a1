import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Markdown } from '../render/Markdown';
import type { Store } from '../store';

const nearBottom = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;

/**
 * The answer being written. Tokens go into its own store; this component alone re-renders, at most once a
 * frame, and the page keeps following the end of the answer while the reader is at the bottom.
 */
export function StreamingTurn({ query, stream }: { query: string; stream: Store<string> }) {
  const [text, setText] = useState(stream.get());
  const follow = useRef(true);
  useEffect(() => {
    let frame = 0;
    const unsubscribe = stream.subscribe(() => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        follow.current = nearBottom();
        setText(stream.get());
      });
    });
    return () => {
      unsubscribe();
      cancelAnimationFrame(frame);
    };
  }, [stream]);
  useLayoutEffect(() => {
    if (follow.current) window.scrollTo({ top: document.documentElement.scrollHeight });
  }, [text]);

  return (
    <article class="turn" aria-busy="true">
      <div class="question">
        <span class="visually-hidden">You asked:</span>
        <p class="untrusted">{query}</p>
      </div>
      <div class="answer streaming">
        <span class="visually-hidden">Answer:</span>
        {text ? <Markdown text={text} /> : <p class="muted">Searching the documents…</p>}
      </div>
    </article>
  );
}
