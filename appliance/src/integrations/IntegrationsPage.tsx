import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useLoad } from '../components/useLoad';
import { Pagination } from '../components/Pagination';
import { SourceCard } from '../jobs/SourceCard';
import { useLatestJobs } from '../jobs/useLatestJobs';
import { SourceAccessDialog } from '../groups/SourceAccessDialog';
import { roleAtLeast, session, tierAtLeast } from '../session/session';
import { useStore } from '../store';
import { deleteIntegration, type Integration, integrationOf, INTEGRATIONS_PAGE_SIZE, listIntegrations, SYNC_JOB_TYPE, syncIntegration } from './api';
import { IntegrationForm } from './IntegrationForm';

type Editing = { kind: 'new' } | { kind: 'edit' | 'delete' | 'access'; integration: Integration } | null;

/** Websites crawled into the library: admins manage them, editors sync them, everyone sees how the last sync went. */
export default function IntegrationsPage() {
  const { user, tier } = useStore(session);
  const canSync = roleAtLeast(user?.role, 'editor');
  // Groups are ENTERPRISE: below it every document is everyone's.
  const canSetAccess = canSync && tierAtLeast(tier, 'ENTERPRISE');
  const canManage = roleAtLeast(user?.role, 'admin');
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => listIntegrations(offset), [offset]);
  const page = list.value;
  const [failure, setError] = useState<string | null>(null);
  const error = failure ?? list.error;
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const refresh = list.reload;
  const { jobs, track } = useLatestJobs(SYNC_JOB_TYPE, integrationOf, () => (setNotice(null), refresh()));

  const sync = async (integration: Integration) => {
    setError(null);
    setNotice(null);
    try {
      track(await syncIntegration(integration.id));
      setNotice(`A sync of ${integration.name} was started.`);
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Integrations</h1>
        {canManage && (
          <button type="button" class="button-primary" onClick={() => setEditing({ kind: 'new' })}>
            New website
          </button>
        )}
      </div>
      <p class="muted">Websites crawled into the library: one site each, robots.txt honoured, only pages that changed fetched again.</p>
      {notice && <Alert kind="success">{notice}</Alert>}
      {error && <Alert kind="error">{error}</Alert>}
      {page === null && !error && <p class="loading">Loading…</p>}
      {page?.integrations.length === 0 && (
        <p class="muted">
          {tierAtLeast(tier, 'ENTERPRISE') ? 'No websites you can see (one restricted to groups you are not in stays hidden).' : 'No websites yet.'}
          {canManage ? ' Add one with New website.' : ''}
        </p>
      )}
      {page && page.integrations.length > 0 && (
        <ul class="card-list" aria-label="Websites">
          {page.integrations.map((integration) => (
            <SourceCard
              key={integration.id}
              name={integration.name}
              enabled={integration.enabled}
              job={jobs.get(integration.id)}
              lastAt={integration.last_sync_at}
              noun="sync"
              canRun={canSync}
              canManage={canManage}
              onRun={() => void sync(integration)}
              onEdit={() => setEditing({ kind: 'edit', integration })}
              onDelete={() => setEditing({ kind: 'delete', integration })}
              onAccess={canSetAccess ? () => (setNotice(null), setEditing({ kind: 'access', integration })) : undefined}
            >
              {integration.config.start_url && (
                <>
                  <dt>Start address</dt>
                  <dd>
                    <code>{integration.config.start_url}</code>
                  </dd>
                </>
              )}
              {integration.config.sitemap_url && (
                <>
                  <dt>Sitemap</dt>
                  <dd>
                    <code>{integration.config.sitemap_url}</code>
                  </dd>
                </>
              )}
              <dt>Crawl</dt>
              <dd>
                {integration.config.max_depth} links deep, at most {integration.config.max_pages} pages{integration.config.allow_private_network ? ', LAN addresses allowed' : ''}
              </dd>
              <dt>Sign-in</dt>
              <dd>{integration.credentials_set ? 'Credentials set' : 'None'}</dd>
              <dt>Documents</dt>
              <dd>{integration.document_count}</dd>
            </SourceCard>
          ))}
        </ul>
      )}
      {page && <Pagination offset={offset} pageSize={INTEGRATIONS_PAGE_SIZE} total={page.total} onOffset={setOffset} />}
      {(editing?.kind === 'new' || editing?.kind === 'edit') && (
        <IntegrationForm
          integration={editing.kind === 'edit' ? editing.integration : undefined}
          onClose={() => setEditing(null)}
          onSaved={(saved) => {
            setEditing(null);
            setNotice(editing.kind === 'new' ? `Website ${saved.name} was created. Sync it to index its pages.` : `Website ${saved.name} was saved.`);
            refresh();
          }}
        />
      )}
      {editing?.kind === 'access' && (
        <SourceAccessDialog
          source="integrations"
          target={editing.integration}
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
          title="Delete this website?"
          confirmLabel="Delete website"
          onClose={() => setEditing(null)}
          onConfirm={async () => {
            await deleteIntegration(editing.integration.id);
            setNotice(`Website ${editing.integration.name} was deleted.`);
            refresh();
          }}
        >
          <p>
            <strong class="untrusted">{editing.integration.name}</strong> and its {editing.integration.document_count} documents will be removed from the library and the index.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
