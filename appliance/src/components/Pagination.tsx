interface Props {
  offset: number;
  pageSize: number;
  total: number;
  onOffset: (offset: number) => void;
  /** Shown even when everything fits on one page (the documents page always says how many there are). */
  alwaysShown?: boolean;
}

/** Previous / next over a list the service pages with limit and offset. */
export function Pagination({ offset, pageSize, total, onOffset, alwaysShown = false }: Props) {
  if (alwaysShown ? total === 0 : total <= pageSize && offset === 0) return null;
  return (
    <nav class="pagination" aria-label="Pages">
      <button type="button" class="button-secondary button-small" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        Previous
      </button>
      <span>
        {Math.min(offset + 1, total)}–{Math.min(offset + pageSize, total)} of {total}
      </span>
      <button type="button" class="button-secondary button-small" disabled={offset + pageSize >= total} onClick={() => onOffset(offset + pageSize)}>
        Next
      </button>
    </nav>
  );
}
