import type { DocumentRecord } from '../api/types';
import { formatBytes, formatDate } from '../components/format';

interface Props {
  documents: DocumentRecord[];
  canEdit: boolean;
  selected: Set<string>;
  onSelect: (id: string, selected: boolean) => void;
  onSelectAll: (selected: boolean) => void;
  onDelete: (document: DocumentRecord) => void;
  /** ENTERPRISE: each document's allowed groups are shown (below it, every document is everyone's). */
  showGroups: boolean;
  /** An editor on ENTERPRISE may change them. */
  onAccess?: (document: DocumentRecord) => void;
}

const STATUS_LABEL: Record<DocumentRecord['status'], string> = { queued: 'Queued', indexing: 'Indexing', indexed: 'Indexed', failed: 'Failed' };

/** The documents of one page of the list; on a phone each row reads as a card. */
export function DocumentTable({ documents, canEdit, selected, onSelect, onSelectAll, onDelete, showGroups, onAccess }: Props) {
  const allSelected = documents.length > 0 && documents.every((document) => selected.has(document.id));
  return (
    <div class="table-wrap">
      <table class="table-cards documents">
        <caption class="visually-hidden">Documents</caption>
        <thead>
          <tr>
            {canEdit && (
              <th scope="col">
                <input type="checkbox" aria-label="Select all on this page" checked={allSelected} onChange={(event) => onSelectAll(event.currentTarget.checked)} />
              </th>
            )}
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Size</th>
            <th scope="col">Status</th>
            <th scope="col">Source</th>
            {showGroups && <th scope="col">Groups</th>}
            <th scope="col">Added</th>
            {canEdit && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {documents.map((document) => (
            <tr key={document.id}>
              {canEdit && (
                <td data-label="Select">
                  <input
                    type="checkbox"
                    aria-label={`Select ${document.filename}`}
                    checked={selected.has(document.id)}
                    onChange={(event) => onSelect(document.id, event.currentTarget.checked)}
                  />
                </td>
              )}
              <td data-label="Name" class="doc-name">
                {document.filename}
              </td>
              <td data-label="Type">{document.file_type.toUpperCase()}</td>
              <td data-label="Size">{formatBytes(document.size_bytes)}</td>
              <td data-label="Status">
                <span class={`badge badge-${document.status}`}>{STATUS_LABEL[document.status]}</span>
                {document.status === 'failed' && document.error && <p class="error-text doc-error">{document.error}</p>}
              </td>
              <td data-label="Source">{document.source_type}</td>
              {showGroups && (
                <td data-label="Groups" class="doc-groups">
                  {document.groups.join(', ')}
                </td>
              )}
              <td data-label="Added">{formatDate(document.created_at)}</td>
              {canEdit && (
                <td data-label="Actions">
                  <div class="actions">
                    {onAccess && (
                      <button type="button" class="button-secondary button-small" onClick={() => onAccess(document)} aria-label={`Access to ${document.filename}`}>
                        Access
                      </button>
                    )}
                    <button type="button" class="button-danger button-small" onClick={() => onDelete(document)} aria-label={`Delete ${document.filename}`}>
                      Delete
                    </button>
                  </div>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
