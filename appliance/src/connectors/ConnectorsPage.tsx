import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import type { Job } from '../api/types';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useLoad } from '../components/useLoad';
import { SourceCard } from '../jobs/SourceCard';
import { useLatestJobs } from '../jobs/useLatestJobs';
import { SourceAccessDialog } from '../groups/SourceAccessDialog';
import { roleAtLeast, session, tierAtLeast } from '../session/session';
import { useStore } from '../store';
import { type Connector, connectorOf, deleteConnector, listConnectors, SCAN_JOB_TYPE, scanConnector, syncAllConnectors } from './api';
import { ConnectorForm } from './ConnectorForm';

type Editing = { kind: 'new' } | { kind: 'edit' | 'delete' | 'access'; connector: Connector } | null;

/** Folders on this box indexed in place: admins manage them, editors scan them, everyone sees how the last scan went. */
export default function ConnectorsPage() {
  const { user, tier } = useStore(session);
  const canScan = roleAtLeast(user?.role, 'editor');
  // Groups are ENTERPRISE: below it every document is everyone's.
  const canSetAccess = canScan && tierAtLeast(tier, 'ENTERPRISE');
  const canManage = roleAtLeast(user?.role, 'admin');
  const list = useLoad(listConnectors);
  const connectors = list.value?.connectors ?? null;
  const [failure, setError] = useState<string | null>(null);
  const error = failure ?? list.error;
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const refresh = list.reload;
  // A finished scan changed the document count and the last scan time; its card now says how it went.
  const { jobs, track } = useLatestJobs(SCAN_JOB_TYPE, connectorOf, () => (setNotice(null), refresh()));

  const run = async (start: () => Promise<Job | Job[]>, done: string) => {
    setError(null);
    setNotice(null);
    try {
      const started = await start();
      (Array.isArray(started) ? started : [started]).forEach(track);
      setNotice(done);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Connectors</h1>
        <div class="actions">
          {canScan && !!connectors?.some((connector) => connector.enabled) && (
            <button type="button" class="button-secondary" onClick={() => void run(async () => (await syncAllConnectors()).jobs, 'A scan of every enabled connector was started.')}>
              Scan all
            </button>
          )}
          {canManage && (
            <button type="button" class="button-primary" onClick={() => setEditing({ kind: 'new' })}>
              New connector
            </button>
          )}
        </div>
      </div>
      <p class="muted">Folders on this box whose files are indexed where they are. A scan adds new and changed files and drops the ones that are gone; the files themselves are never changed.</p>
      {notice && <Alert kind="success">{notice}</Alert>}
      {error && <Alert kind="error">{error}</Alert>}
      {connectors === null && !error && <p class="loading">Loading…</p>}
      {connectors?.length === 0 && (
        <p class="muted">
          {tierAtLeast(tier, 'ENTERPRISE') ? 'No connectors you can see (one restricted to groups you are not in stays hidden).' : 'No connectors yet.'}
          {canManage ? ' Add a folder with New connector.' : ''}
        </p>
      )}
      {connectors && connectors.length > 0 && (
        <ul class="card-list" aria-label="Connectors">
          {connectors.map((connector) => (
            <SourceCard
              key={connector.id}
              name={connector.name}
              enabled={connector.enabled}
              job={jobs.get(connector.id)}
              lastAt={connector.last_scan_at}
              noun="scan"
              canRun={canScan}
              canManage={canManage}
              onRun={() => void run(() => scanConnector(connector.id), `A scan of ${connector.name} was started.`)}
              onEdit={() => setEditing({ kind: 'edit', connector })}
              onDelete={() => setEditing({ kind: 'delete', connector })}
              onAccess={canSetAccess ? () => (setNotice(null), setEditing({ kind: 'access', connector })) : undefined}
            >
              <dt>Folder</dt>
              <dd>
                <code>{connector.path}</code>
              </dd>
              <dt>Subfolders</dt>
              <dd>{connector.recursive ? 'Included' : 'Not included'}</dd>
              <dt>File types</dt>
              <dd>{connector.include.length ? connector.include.join(', ') : 'Every supported type'}</dd>
              <dt>Documents</dt>
              <dd>{connector.document_count}</dd>
            </SourceCard>
          ))}
        </ul>
      )}
      {(editing?.kind === 'new' || editing?.kind === 'edit') && (
        <ConnectorForm
          connector={editing.kind === 'edit' ? editing.connector : undefined}
          onClose={() => setEditing(null)}
          onSaved={(saved) => {
            setEditing(null);
            setNotice(editing.kind === 'new' ? `Connector ${saved.name} was created. Scan it to index its files.` : `Connector ${saved.name} was saved.`);
            refresh();
          }}
        />
      )}
      {editing?.kind === 'access' && (
        <SourceAccessDialog
          source="connectors"
          target={editing.connector}
          onClose={() => setEditing(null)}
          onSaved={(text) => {
            setEditing(null);
            setNotice(text);
            refresh();
          }}
        />
      )}
      {editing?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete this connector?"
          confirmLabel="Delete connector"
          onClose={() => setEditing(null)}
          onConfirm={async () => {
            await deleteConnector(editing.connector.id);
            setNotice(`Connector ${editing.connector.name} was deleted.`);
            refresh();
          }}
        >
          <p>
            <strong class="untrusted">{editing.connector.name}</strong> and its {editing.connector.document_count} documents will be removed from the library and the index. The files in{' '}
            <code class="untrusted">{editing.connector.path}</code> stay on disk.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
