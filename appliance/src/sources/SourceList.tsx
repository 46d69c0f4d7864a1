import type { Source } from '../api/types';
import { Highlighted } from './Highlighted';
import { citedSpan } from './locate';

interface Props {
  /** Makes the ids of the items, which citation links point at. */
  idPrefix: string;
  sources: Source[];
  answer: string;
  selected: number | null;
  onOpen: (source: Source) => void;
}

export const sourceId = (idPrefix: string, marker: number) => `${idPrefix}-source-${marker}`;

/** The sources of one answer: file, page or heading, and the chunk with the span the answer cites marked. */
export function SourceList({ idPrefix, sources, answer, selected, onOpen }: Props) {
  return (
    <ol class="source-list">
      {sources.map((source) => (
        <li key={source.chunk_id} id={sourceId(idPrefix, source.marker)} tabIndex={-1} class={selected === source.marker ? 'source selected' : 'source'}>
          <div class="source-head">
            <span class="source-marker" aria-hidden="true">
              {source.marker}
            </span>
            <span class="source-file">{source.filename}</span>
            {source.page !== undefined && <span class="muted">page {source.page}</span>}
            {source.heading && <span class="muted source-heading">{source.heading}</span>}
            <button type="button" class="button-secondary button-small" onClick={() => onOpen(source)} aria-label={`Open ${source.filename} at the cited place`}>
              Open
            </button>
          </div>
          <p class="source-text">
            <Highlighted text={source.text} span={citedSpan(answer, source.marker, source.text)} />
          </p>
        </li>
      ))}
    </ol>
  );
}
