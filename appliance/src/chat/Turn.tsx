import { useCallback, useState } from 'preact/hooks';
import type { Source } from '../api/types';
import { Alert } from '../components/Alert';
import { memo } from '../components/memo';
import { Markdown } from '../render/Markdown';
import { SourceList, sourceId } from '../sources/SourceList';
import { TurnDetails } from './TurnDetails';
import { NOT_FOUND_ANSWER, type TurnState } from './turn';

interface Props {
  turn: TurnState;
  onOpenSource: (source: Source) => void;
}

function Labels({ turn }: { turn: TurnState }) {
  const notFound = turn.answer.trim() === NOT_FOUND_ANSWER;
  if (!notFound && turn.mode !== 'extractive') return null;
  return (
    <p class="answer-labels">
      {notFound && <span class="badge">Not found in the documents</span>}
      {turn.mode === 'extractive' && !notFound && <span class="badge">Extractive: quoted passages, no language model</span>}
    </p>
  );
}

/** A finished question and answer; memoised, so a streaming answer elsewhere never re-renders it. */
export const Turn = memo(function Turn({ turn, onOpenSource }: Props) {
  const [sourcesOpen, setSourcesOpen] = useState(false);
  const [selected, setSelected] = useState<number | null>(null);
  const prefix = turn.key;

  const citation = useCallback(
    (marker: number) => {
      if (!turn.sources.some((source) => source.marker === marker)) return null;
      const link = document.createElement('a');
      link.href = `#${sourceId(prefix, marker)}`;
      link.className = 'cite';
      link.dataset.marker = String(marker);
      link.textContent = String(marker);
      link.setAttribute('aria-label', `Source ${marker}`);
      return link;
    },
    [turn],
  );

  // Citation links are made by the renderer: one listener for all of them.
  const followCitation = (event: MouseEvent) => {
    const link = (event.target as Element).closest<HTMLAnchorElement>('a.cite');
    if (!link) return;
    event.preventDefault();
    const marker = Number(link.dataset.marker);
    setSourcesOpen(true);
    setSelected(marker);
    requestAnimationFrame(() => {
      const item = document.getElementById(sourceId(prefix, marker));
      item?.scrollIntoView({ block: 'nearest' });
      item?.focus();
    });
  };

  return (
    <article class="turn">
      <div class="question">
        <span class="visually-hidden">You asked:</span>
        <p class="untrusted">{turn.query}</p>
      </div>
      <div class="answer" onClick={followCitation}>
        <span class="visually-hidden">Answer:</span>
        <Labels turn={turn} />
        <Markdown text={turn.answer} citation={citation} />
        {turn.status === 'stopped' && <p class="muted">Stopped. This answer was not saved.</p>}
        {turn.status === 'failed' && <Alert kind="error">{turn.error ?? 'The answer failed.'}</Alert>}
      </div>
      {turn.sources.length > 0 && (
        <details class="turn-sources" open={sourcesOpen} onToggle={(event) => setSourcesOpen((event.currentTarget as HTMLDetailsElement).open)}>
          <summary>Sources ({turn.sources.length})</summary>
          <SourceList idPrefix={prefix} sources={turn.sources} answer={turn.answer} selected={selected} onOpen={onOpenSource} />
        </details>
      )}
      {turn.metadata && <TurnDetails metadata={turn.metadata} />}
    </article>
  );
});
