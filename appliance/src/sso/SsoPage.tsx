import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useLoad } from '../components/useLoad';
import { deleteProvider, listProviders, type Provider, type ProviderTest, testProvider } from './api';
import { ProviderForm } from './ProviderForm';

type Editing = { kind: 'new' } | { kind: 'edit'; provider: Provider } | { kind: 'delete'; provider: Provider } | null;
type TestState = { busy: true } | { busy: false; result: ProviderTest } | { busy: false; error: string };

/** What the test found: the endpoints of a working discovery, or why it failed (the service's words, shown as text). */
function TestResult({ state }: { state: TestState }) {
  if (state.busy) return <p role="status">Testing…</p>;
  if ('error' in state) return <Alert kind="error">{state.error}</Alert>;
  const { result } = state;
  if (!result.ok) return <Alert kind="error">The test failed: {result.error ?? 'no reason given'}</Alert>;
  return (
    <Alert kind="success">
      <p>The provider answered; discovery worked.</p>
      <dl class="facts">
        <dt>Issuer</dt>
        <dd>{result.issuer}</dd>
        <dt>Authorization</dt>
        <dd>{result.authorization_endpoint}</dd>
        <dt>Token</dt>
        <dd>{result.token_endpoint}</dd>
        <dt>Keys</dt>
        <dd>{result.jwks_uri}</dd>
      </dl>
    </Alert>
  );
}

/** OpenID Connect providers (admin, ENTERPRISE): each becomes a button on the sign-in page. */
export default function SsoPage() {
  const list = useLoad(listProviders);
  const providers = list.value;
  const error = list.error;
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const [tests, setTests] = useState<Record<string, TestState>>({});
  const refresh = list.reload;

  const test = async (provider: Provider) => {
    setTests((current) => ({ ...current, [provider.id]: { busy: true } }));
    let state: TestState;
    try {
      state = { busy: false, result: await testProvider(provider.id) };
    } catch (caught) {
      state = { busy: false, error: messageOf(caught) };
    }
    setTests((current) => ({ ...current, [provider.id]: state }));
  };

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Single sign-on</h1>
        <button type="button" class="button-primary" onClick={() => setEditing({ kind: 'new' })}>
          New provider
        </button>
      </div>
      <p class="muted">OpenID Connect identity providers. Each is a button on the sign-in page; users are created at their first sign-in.</p>
      {notice && <Alert kind="success">{notice}</Alert>}
      {error && <Alert kind="error">{error}</Alert>}
      {providers === null && !error && <p class="loading">Loading…</p>}
      {providers?.length === 0 && <p class="muted">No identity providers yet.</p>}
      {providers && providers.length > 0 && (
        <ul class="card-list" aria-label="Identity providers">
          {providers.map((provider) => (
            <li key={provider.id} class="card">
              <div class="card-head">
                <h2 class="card-title">{provider.display_name}</h2>
                <code class="muted">{provider.name}</code>
              </div>
              <dl class="facts">
                <dt>Discovery</dt>
                <dd>
                  <code>{provider.discovery_url}</code>
                </dd>
                <dt>Client ID</dt>
                <dd>
                  <code>{provider.client_id}</code>
                </dd>
                <dt>Client secret</dt>
                <dd>{provider.secret_set ? <span class="badge badge-ok">Secret set</span> : <span class="badge">No secret</span>}</dd>
                <dt>Redirect URI</dt>
                <dd>
                  <code>{provider.redirect_uri}</code>
                </dd>
                <dt>Scopes</dt>
                <dd>{provider.scopes}</dd>
                <dt>Admin groups</dt>
                <dd>{provider.admin_groups.length ? provider.admin_groups.join(', ') : 'None: everyone starts as a viewer'}</dd>
              </dl>
              {tests[provider.id] && <TestResult state={tests[provider.id]} />}
              <div class="actions">
                <button type="button" class="button-secondary button-small" disabled={tests[provider.id]?.busy} onClick={() => void test(provider)} aria-label={`Test ${provider.display_name}`}>
                  Test
                </button>
                <button type="button" class="button-secondary button-small" onClick={() => setEditing({ kind: 'edit', provider })} aria-label={`Edit ${provider.display_name}`}>
                  Edit
                </button>
                <button type="button" class="button-danger button-small" onClick={() => setEditing({ kind: 'delete', provider })} aria-label={`Delete ${provider.display_name}`}>
                  Delete
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {(editing?.kind === 'new' || editing?.kind === 'edit') && (
        <ProviderForm
          provider={editing.kind === 'edit' ? editing.provider : undefined}
          onClose={() => setEditing(null)}
          onSaved={(saved) => {
            setEditing(null);
            setNotice(`${saved.display_name} was saved.`);
            // A changed provider has to be tested again.
            setTests(({ [saved.id]: _stale, ...rest }) => rest);
            refresh();
          }}
        />
      )}
      {editing?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete this identity provider?"
          confirmLabel="Delete provider"
          onClose={() => setEditing(null)}
          onConfirm={async () => {
            await deleteProvider(editing.provider.id);
            setNotice(`${editing.provider.display_name} was deleted.`);
            refresh();
          }}
        >
          <p>
            The <strong class="untrusted">{editing.provider.display_name}</strong> button leaves the sign-in page. Users created through it keep their accounts but cannot sign in through it any more.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
