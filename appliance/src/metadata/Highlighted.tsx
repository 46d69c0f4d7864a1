import type { Span, TestResult } from './api';

/** The sample text with each match marked, and the captured value inside it marked again; text nodes only, never HTML. */
export function Highlighted({ text, result }: { text: string; result: TestResult }) {
  const pieces: preact.JSX.Element[] = [];
  let at = 0;
  result.matches.forEach((match, i) => {
    if (match.span.start < at) return;
    pieces.push(<span key={`t${i}`}>{text.slice(at, match.span.start)}</span>);
    pieces.push(
      <mark key={`m${i}`} class="match" data-value={match.value}>
        {inner(text, match.span, match.value_span)}
      </mark>,
    );
    at = match.span.end;
  });
  pieces.push(<span key="rest">{text.slice(at)}</span>);
  return <pre class="sample" aria-label="Sample text with matches highlighted">{pieces}</pre>;
}

function inner(text: string, span: Span, value: Span | null) {
  if (!value || value.start < span.start || value.end > span.end) return text.slice(span.start, span.end);
  return (
    <>
      {text.slice(span.start, value.start)}
      <strong class="value">{text.slice(value.start, value.end)}</strong>
      {text.slice(value.end, span.end)}
    </>
  );
}
