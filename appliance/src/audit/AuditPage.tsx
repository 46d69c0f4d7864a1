import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { SelectField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { formatDate } from '../components/format';
import { FormButtons } from '../components/FormButtons';
import { Pagination } from '../components/Pagination';
import { useLoad } from '../components/useLoad';
import { useSubmit } from '../components/useSubmit';
import { type AuditConfig, auditConfig, type AuditFilters, EVENT_TYPES, listAudit, PAGE, setRetention, type Verification, verifyAudit } from './api';

const NO_FILTERS: AuditFilters = { event: '', user: '', from: '', to: '' };
const DAY_PATTERN = '\\d{4}-\\d{2}-\\d{2}';

function Filters({ onApply }: { onApply: (filters: AuditFilters) => void }) {
  const [draft, setDraft] = useState(NO_FILTERS);
  const set = (key: keyof AuditFilters) => (value: string) => setDraft({ ...draft, [key]: value });
  return (
    <form class="row" aria-label="Filters" onSubmit={(event) => (event.preventDefault(), onApply(draft))}>
      <SelectField label="Event type" value={draft.event} onValue={set('event')} options={[['', 'Any'], ...EVENT_TYPES.map((type) => [type, type] as const)]} />
      <TextField label="User (name or id)" value={draft.user} onValue={set('user')} maxLength={64} autoCapitalize="none" spellcheck={false} />
      <TextField label="From (YYYY-MM-DD)" value={draft.from} onValue={set('from')} pattern={DAY_PATTERN} placeholder="2026-01-31" />
      <TextField label="To (YYYY-MM-DD)" value={draft.to} onValue={set('to')} pattern={DAY_PATTERN} placeholder="2026-12-31" />
      <button type="submit" class="button-primary">Apply filters</button>
    </form>
  );
}

function Retention({ config, onSaved }: { config: AuditConfig; onSaved: (config: AuditConfig) => void }) {
  const [days, setDays] = useState(String(config.retention_days));
  const { busy, error, submit } = useSubmit(() => setRetention(Number(days)), onSaved);
  const errors = formErrors(error, ['body.retention_days']);
  const { min, max } = config.retention_bounds;
  return (
    <form class="stack narrow" onSubmit={submit} aria-label="Retention">
      {errors.general && <Alert kind="error">{errors.general}</Alert>}
      <TextField label="Keep entries for (days)" type="number" inputMode="numeric" required value={days} onValue={setDays} hint={`${min} to ${max} days. ${config.sweeps_enabled ? 'Older entries are removed at once and then daily.' : 'RETENTION_SWEEPS_ENABLED is false: nothing is removed.'}`} error={errors.field('body.retention_days')} />
      <FormButtons busy={busy} label="Save retention" />
    </form>
  );
}

/** The audit log (admin, ENTERPRISE): who did what, filtered, newest first; its chain verified on demand. */
export default function AuditPage() {
  const [filters, setFilters] = useState(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => listAudit(filters, offset), [filters, offset]);
  const config = useLoad(auditConfig);
  const [verification, setVerification] = useState<Verification | null>(null);
  const [verifyError, setVerifyError] = useState<string | null>(null);
  const verify = async () => {
    setVerifyError(null);
    try {
      setVerification(await verifyAudit());
    } catch (caught) {
      setVerifyError(messageOf(caught));
    }
  };

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Audit log</h1>
        <div class="actions">
          <button type="button" class="button-secondary" onClick={() => void verify()}>
            Verify the chain
          </button>
        </div>
      </div>
      {verifyError && <Alert kind="error">{verifyError}</Alert>}
      {verification?.ok && <Alert kind="success">{`The chain is intact: ${verification.entries_checked} entries checked.`}</Alert>}
      {verification && !verification.ok && (
        <Alert kind="error">{`The chain is broken at entry ${verification.first_broken?.id} (${verification.first_broken?.reason}): the log was changed outside the service.`}</Alert>
      )}
      <Filters onApply={(next) => (setOffset(0), setFilters(next))} />
      {list.error && <Alert kind="error">{list.error}</Alert>}
      {list.value === null && !list.error && <p class="loading">Loading…</p>}
      {list.value && list.value.total === 0 && <p>No entries match.</p>}
      {list.value && list.value.total > 0 && (
        // Focusable: the details column can make it scroll sideways, and a keyboard must reach that.
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Audit entries">
          <table>
            <caption class="visually-hidden">Audit entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Actor</th>
                <th scope="col">Address</th>
                <th scope="col">Target</th>
                <th scope="col">Outcome</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {list.value.entries.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatDate(entry.time)}</td>
                  <td>
                    <code>{entry.event}</code>
                  </td>
                  <td>{entry.actor.username ?? entry.actor.user_id ?? '—'}</td>
                  <td>{entry.client_address ?? '—'}</td>
                  <td>{entry.target ?? '—'}</td>
                  <td>{entry.outcome === 'failure' ? <span class="badge badge-failed">failure</span> : 'success'}</td>
                  <td>
                    <code>{JSON.stringify(entry.details)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.value && <Pagination offset={offset} pageSize={PAGE} total={list.value.total} onOffset={setOffset} />}
      <section class="stack" aria-labelledby="retention-title">
        <h2 id="retention-title">Retention</h2>
        {config.error && <Alert kind="error">{config.error}</Alert>}
        {config.value && <Retention config={config.value} onSaved={config.set} />}
      </section>
    </section>
  );
}
