import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../api/errors';
import type { DocumentRecord, DocumentStatus } from '../api/types';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Pagination } from '../components/Pagination';
import { useLoad } from '../components/useLoad';
import { AccessDialog } from '../groups/AccessDialog';
import { setDocumentAccess } from '../groups/api';
import { roleAtLeast, session, tierAtLeast } from '../session/session';
import { useStore } from '../store';
import { type DocumentQuery, deleteDocument, deleteDocuments, isSettled, listDocuments, uploadDocument } from './api';
import { DocumentTable } from './DocumentTable';
import { type UploadItem, UploadPanel } from './UploadPanel';
import './documents.css';

const PAGE_SIZE = 25;
const POLL_MS = 1500;
const PARALLEL_UPLOADS = 2;

const SORTS: { label: string; sort: DocumentQuery['sort']; order: DocumentQuery['order'] }[] = [
  { label: 'Newest first', sort: 'created_at', order: 'desc' },
  { label: 'Oldest first', sort: 'created_at', order: 'asc' },
  { label: 'Recently updated', sort: 'updated_at', order: 'desc' },
  { label: 'Name, A to Z', sort: 'filename', order: 'asc' },
  { label: 'Name, Z to A', sort: 'filename', order: 'desc' },
  { label: 'Largest first', sort: 'size_bytes', order: 'desc' },
  { label: 'Smallest first', sort: 'size_bytes', order: 'asc' },
];
const FILE_TYPES = ['pdf', 'docx', 'txt', 'md', 'csv', 'xlsx', 'html', 'png', 'jpg', 'tiff'];

let uploadCounter = 0;

type Confirming = { kind: 'one'; document: DocumentRecord } | { kind: 'selected'; ids: string[] };

function Filter({ id, label, value, options, onChange }: { id: string; label: string; value: string; options: [string, string][]; onChange: (value: string) => void }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {options.map(([optionValue, text]) => (
          <option key={optionValue} value={optionValue}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

export default function DocumentsPage() {
  const { user, tier } = useStore(session);
  const canEdit = roleAtLeast(user?.role, 'editor');
  // Below ENTERPRISE every document is everyone's: no groups to show or set.
  const groupsShown = tierAtLeast(tier, 'ENTERPRISE');
  const [status, setStatus] = useState('');
  const [fileType, setFileType] = useState('');
  const [source, setSource] = useState('');
  const [sortIndex, setSortIndex] = useState(0);
  const [offset, setOffset] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirming, setConfirming] = useState<Confirming | null>(null);
  const [access, setAccess] = useState<DocumentRecord | null>(null);
  const [uploads, setUploads] = useState<UploadItem[]>([]);
  const queue = useRef<{ key: string; file: File }[]>([]);
  const active = useRef(0);

  const query: DocumentQuery = {
    status: (status || undefined) as DocumentStatus | undefined,
    file_type: fileType || undefined,
    source_type: (source || undefined) as DocumentRecord['source_type'] | undefined,
    sort: SORTS[sortIndex].sort,
    order: SORTS[sortIndex].order,
    limit: PAGE_SIZE,
    offset,
  };
  const queryKey = JSON.stringify(query);

  const list = useLoad(() => listDocuments(query), [queryKey]);
  const page = list.value;

  // Live status: while a listed document or an upload is still on its way, look again shortly.
  const unsettled = (page?.documents.some((document) => !isSettled(document.status)) ?? false) || uploads.some((item) => item.documentId && !isSettled(item.state as DocumentStatus));
  useEffect(() => {
    if (!unsettled) return;
    const timer = setTimeout(async () => {
      const tracked = uploads.filter((item) => item.documentId && !isSettled(item.state as DocumentStatus));
      if (tracked.length) {
        try {
          const recent = await listDocuments({ sort: 'updated_at', order: 'desc', limit: 100, offset: 0 });
          const byId = new Map(recent.documents.map((document) => [document.id, document]));
          setUploads((items) =>
            items.map((item) => {
              const document = item.documentId ? byId.get(item.documentId) : undefined;
              return document ? { ...item, state: document.status, message: document.status === 'failed' ? (document.error ?? 'Indexing failed') : undefined } : item;
            }),
          );
        } catch {
          // the next round tries again
        }
      }
      list.reload();
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [unsettled, page, uploads]);

  const patchUpload = (key: string, change: Partial<UploadItem>) => setUploads((items) => items.map((item) => (item.key === key ? { ...item, ...change } : item)));

  const pump = () => {
    while (active.current < PARALLEL_UPLOADS && queue.current.length) {
      const { key, file } = queue.current.shift()!;
      active.current++;
      patchUpload(key, { state: 'uploading' });
      uploadDocument(file, (progress) => patchUpload(key, { progress }))
        .then(({ document }) => {
          patchUpload(key, { state: document.status, progress: 1, documentId: document.id });
          list.reload();
        })
        .catch((caught) => patchUpload(key, { state: 'rejected', message: messageOf(caught) }))
        .finally(() => {
          active.current--;
          pump();
        });
    }
  };

  const addFiles = (files: File[]) => {
    const items = files.map((file) => ({ key: `u${uploadCounter++}`, name: file.name, size: file.size, progress: 0, state: 'waiting' as const }));
    setUploads((existing) => [...existing, ...items]);
    queue.current.push(...items.map((item, index) => ({ key: item.key, file: files[index] })));
    pump();
  };

  /** A refusal stays in the confirm dialog; one already gone is only reported, since the list no longer has it either. */
  const confirmDelete = async (ids: string[]) => {
    try {
      if (ids.length === 1) await deleteDocument(ids[0]);
      else await deleteDocuments(ids);
      setNotice(ids.length === 1 ? 'The document was deleted.' : `${ids.length} documents were deleted.`);
      setSelected(new Set());
    } catch (caught) {
      if (!(caught instanceof ApiError && caught.status === 404)) throw caught;
      setNotice('The document was already deleted.');
    }
    list.reload();
  };

  const setFilter = (set: (value: string) => void) => (value: string) => {
    set(value);
    setOffset(0);
    setSelected(new Set());
  };
  const total = page?.total ?? 0;
  const selectedIds = [...selected];

  return (
    <section class="page stack">
      <h1 tabIndex={-1}>Documents</h1>
      {canEdit && <UploadPanel items={uploads} onFiles={addFiles} onClear={() => setUploads((items) => items.filter((item) => !['indexed', 'failed', 'rejected'].includes(item.state)))} />}
      <section class="stack" aria-labelledby="library-title">
        <h2 id="library-title">Library</h2>
        <div class="filters">
          <Filter id="filter-status" label="Status" value={status} onChange={setFilter(setStatus)} options={[['', 'Any status'], ['queued', 'Queued'], ['indexing', 'Indexing'], ['indexed', 'Indexed'], ['failed', 'Failed']]} />
          <Filter id="filter-type" label="Type" value={fileType} onChange={setFilter(setFileType)} options={[['', 'Any type'], ...FILE_TYPES.map((type): [string, string] => [type, type.toUpperCase()])]} />
          <Filter id="filter-source" label="Source" value={source} onChange={setFilter(setSource)} options={[['', 'Any source'], ['upload', 'Uploads'], ['connector', 'Connectors'], ['integration', 'Integrations']]} />
          <Filter id="sort" label="Sort" value={String(sortIndex)} onChange={setFilter((value) => setSortIndex(Number(value)))} options={SORTS.map((option, index): [string, string] => [String(index), option.label])} />
        </div>
        {notice && <Alert kind="success">{notice}</Alert>}
        {list.error && <Alert kind="error">{list.error}</Alert>}
        {canEdit && selectedIds.length > 0 && (
          <div class="bulk-bar">
            <span>{selectedIds.length} selected</span>
            <button type="button" class="button-danger" onClick={() => setConfirming({ kind: 'selected', ids: selectedIds })}>
              Delete selected
            </button>
          </div>
        )}
        {page === null && !list.error && <p class="loading">Loading…</p>}
        {page && page.documents.length === 0 && <p class="muted">No documents{status || fileType || source ? ' match these filters' : ' yet'}.</p>}
        {page && page.documents.length > 0 && (
          <DocumentTable
            documents={page.documents}
            canEdit={canEdit}
            selected={selected}
            onSelect={(id, on) => setSelected((current) => (on ? new Set(current).add(id) : new Set([...current].filter((other) => other !== id))))}
            onSelectAll={(on) => setSelected(on ? new Set(page.documents.map((document) => document.id)) : new Set())}
            onDelete={(document) => setConfirming({ kind: 'one', document })}
            showGroups={groupsShown}
            onAccess={canEdit && groupsShown ? (document) => (setNotice(null), setAccess(document)) : undefined}
          />
        )}
        <Pagination offset={offset} pageSize={PAGE_SIZE} total={total} onOffset={setOffset} alwaysShown />
      </section>
      {access && (
        <AccessDialog
          title={`Access to ${access.filename}`}
          subject="this document"
          current={async () => access.groups}
          save={(groups) => setDocumentAccess(access.id, groups)}
          onClose={() => setAccess(null)}
          onSaved={(saved, stillReadable) => {
            setAccess(null);
            setNotice(
              stillReadable
                ? `${access.filename} may now be read by: ${saved.groups.join(', ')}.`
                : `${access.filename} may now be read by: ${saved.groups.join(', ')}. You are in none of these groups, so it is no longer listed for you.`,
            );
            list.reload();
          }}
        />
      )}
      {confirming && (
        <ConfirmDialog
          title={confirming.kind === 'one' ? 'Delete this document?' : `Delete ${confirming.ids.length} documents?`}
          confirmLabel="Delete"
          onConfirm={() => confirmDelete(confirming.kind === 'one' ? [confirming.document.id] : confirming.ids)}
          onClose={() => setConfirming(null)}
        >
          <p>
            {confirming.kind === 'one' ? <span class="untrusted">{confirming.document.filename}</span> : `${confirming.ids.length} documents`} will be removed from the library and the index. This
            cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
