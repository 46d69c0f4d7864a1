import { useState } from 'preact/hooks';
import type { Tier } from '../api/types';
import { Alert } from '../components/Alert';
import { TextAreaField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { formatBytes, formatDate } from '../components/format';
import { Meter } from '../components/Meter';
import { useLoad } from '../components/useLoad';
import { useSubmit } from '../components/useSubmit';
import { tierChanged } from '../session/session';
import { applyLicense, license, type LicenseView } from './api';
import './license.css';

const TIER_TEXT: Record<Tier, string> = {
  FREE: 'The free plan: the essentials, with the smallest limits.',
  PRO: 'PRO: spreadsheets and web pages as documents, and larger limits.',
  ENTERPRISE: 'ENTERPRISE: single sign-on, two-step sign-in, admin token lifetimes, and the limits of your licence.',
};

function Usage({ view }: { view: LicenseView }) {
  return (
    <div class="stack">
      <Meter label="Documents" value={view.usage.documents} max={view.limits.documents} text={`${view.usage.documents.toLocaleString()} of ${view.limits.documents.toLocaleString()}`} />
      <Meter label="Storage" value={view.usage.storage_bytes} max={view.limits.storage_bytes} text={`${formatBytes(view.usage.storage_bytes)} of ${formatBytes(view.limits.storage_bytes)}`} />
      <p class="muted">Largest file: {formatBytes(view.limits.file_size_bytes)}.</p>
    </div>
  );
}

function ApplyForm({ onApplied }: { onApplied: (view: LicenseView) => void }) {
  const [key, setKey] = useState('');
  const { busy, error, submit } = useSubmit(() => applyLicense(key), (view) => (setKey(''), onApplied(view)));
  const errors = formErrors(error, ['body.license_key']);
  // Every refusal is about the key (malformed, bad signature, expired): it goes under the field.
  const keyError = errors.field('body.license_key') ?? errors.general ?? undefined;
  return (
    <form class="stack" onSubmit={submit}>
      <TextAreaField
        label="Licence key"
        class="license-key"
        rows={5}
        required
        spellcheck={false}
        value={key}
        onValue={setKey}
        hint="Paste the whole key, starting HEARTH-LICENSE-1. It replaces the licence in force at once."
        error={keyError}
      />
      <div>
        <button type="submit" class="button-primary" disabled={busy || !key.trim()}>
          {busy ? 'Applying…' : 'Apply the licence'}
        </button>
      </div>
    </form>
  );
}

/** The plan in force, usage against its limits, and applying a key (admin). */
export default function LicensePage() {
  const { value: view, error, set: setView } = useLoad(license);
  const [applied, setApplied] = useState(false);

  return (
    <section class="page stack">
      <h1 tabIndex={-1}>Licence</h1>
      {error && <Alert kind="error">{error}</Alert>}
      {view === null && !error && <p class="loading">Loading…</p>}
      {applied && view && <Alert kind="success">The licence was applied: this box is on the {view.tier} plan.</Alert>}
      {view && (
        <div class="license-layout">
          <section class="panel stack" aria-labelledby="plan-title">
            <h2 id="plan-title">
              Plan <span class="badge tier-badge">{view.tier}</span>
            </h2>
            <p>{TIER_TEXT[view.tier]}</p>
            {view.expired && <Alert kind="warning">The licence expired{view.expires_at ? ` on ${formatDate(view.expires_at)}` : ''}; the box is back on the free plan until a new key is applied.</Alert>}
            {(view.licensee || view.licence_id) && (
              <dl class="facts">
                {view.licensee && (
                  <>
                    <dt>Licensee</dt>
                    <dd>{view.licensee}</dd>
                  </>
                )}
                {view.licence_id && (
                  <>
                    <dt>Licence</dt>
                    <dd>
                      <code>{view.licence_id}</code>
                    </dd>
                  </>
                )}
                {view.expires_at && (
                  <>
                    <dt>{view.expired ? 'Expired' : 'Expires'}</dt>
                    <dd>{formatDate(view.expires_at)}</dd>
                  </>
                )}
              </dl>
            )}
          </section>
          <section class="stack" aria-labelledby="usage-title">
            <h2 id="usage-title">Usage</h2>
            <Usage view={view} />
          </section>
        </div>
      )}
      <section class="stack narrow" aria-labelledby="apply-title">
        <h2 id="apply-title">Apply a licence</h2>
        <ApplyForm
          onApplied={(next) => {
            setView(next);
            setApplied(true);
            tierChanged(next.tier);
          }}
        />
      </section>
    </section>
  );
}
