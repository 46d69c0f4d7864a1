interface Props {
  offset: number;
  pageSize: number;
  total: number;
  onOffset: (offset: number) => void;
}

/** Previous / next over a list the service pages with limit and offset. */
export function Pagination({ offset, pageSize, total, onOffset }: Props) {
  if (total <= pageSize && offset === 0) return null;
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
