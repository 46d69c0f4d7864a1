import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CheckboxField, SelectField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { formatDate } from '../components/format';
import { FormButtons } from '../components/FormButtons';
import { useLoad } from '../components/useLoad';
import { useSubmit } from '../components/useSubmit';
import { createSchedule, deleteSchedule, listSchedules, listSourceNames, previewCron, type Schedule, setEnabled } from './api';

const FIELDS = ['body.source_id', 'body.source_type', 'body.cron', 'body.enabled'];
const OUTCOMES: Record<NonNullable<Schedule['last_outcome']>, string> = {
  started: 'Started',
  skipped_running: 'Skipped: previous run still going',
  skipped_disabled: 'Skipped: source disabled',
  failed: 'Failed to start',
};

type Sources = Awaited<ReturnType<typeof listSourceNames>>;

/** The next runs of the cron being typed, asked of the service (the same parser that will fire it). */
function NextRuns({ cron }: { cron: string }) {
  const [runs, setRuns] = useState<string[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!cron.trim()) return void (setRuns(null), setProblem(null));
    const controller = new AbortController();
    const timer = setTimeout(() => {
      previewCron(cron, controller.signal).then(
        (preview) => (setRuns(preview.next_runs), setProblem(null)),
        (caught) => !controller.signal.aborted && (setRuns(null), setProblem(messageOf(caught))),
      );
    }, 250);
    return () => (clearTimeout(timer), controller.abort());
  }, [cron]);
  if (problem) return <p class="field-error">{problem}</p>;
  if (!runs) return null;
  return (
    <div class="next-runs" aria-live="polite">
      <p class="hint">Next runs (UTC):</p>
      <ul>
        {runs.map((run) => (
          <li key={run}>{run.replace('T', ' ').replace(/:00\.000Z$/, ' UTC')}</li>
        ))}
      </ul>
    </div>
  );
}

function NewScheduleForm({ sources, onCreated }: { sources: Sources; onCreated: () => void }) {
  const [source, setSource] = useState(sources[0] ? `${sources[0].type}:${sources[0].id}` : '');
  const [cron, setCron] = useState('0 3 * * *');
  const [enabled, setEnabledField] = useState(true);
  const { busy, error, submit } = useSubmit(() => {
    const [type, ...id] = source.split(':');
    return createSchedule({ source_type: type as Schedule['source_type'], source_id: id.join(':'), cron, enabled });
  }, onCreated);
  const errors = formErrors(error, FIELDS);
  if (!sources.length) return <p class="muted">Add a connector or an integration first: a schedule scans or syncs one of them.</p>;
  return (
    <form class="stack narrow" onSubmit={submit} aria-label="New schedule">
      {errors.general && <Alert kind="error">{errors.general}</Alert>}
      <SelectField
        label="Source"
        value={source}
        onValue={setSource}
        options={sources.map((entry) => [`${entry.type}:${entry.id}`, `${entry.name} (${entry.type})`] as const)}
        error={errors.field('body.source_id')}
      />
      <TextField label="Cron (UTC)" value={cron} onValue={setCron} required maxLength={100} spellcheck={false} autoCapitalize="none" hint="minute hour day-of-month month day-of-week, e.g. 0 3 * * * for 03:00 UTC every day" error={errors.field('body.cron')} />
      <NextRuns cron={cron} />
      <CheckboxField label="Enabled" checked={enabled} onChecked={setEnabledField} />
      <FormButtons busy={busy} label="Create schedule" />
    </form>
  );
}

/** Cron schedules for connector scans and integration syncs (admin, PRO or higher). */
export default function SchedulesPage() {
  const list = useLoad(listSchedules);
  const sources = useLoad(listSourceNames);
  const [failure, setFailure] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const nameOf = (schedule: Schedule) => sources.value?.find((entry) => entry.id === schedule.source_id)?.name ?? schedule.source_id;
  const toggle = async (schedule: Schedule) => {
    setFailure(null);
    try {
      await setEnabled(schedule.id, !schedule.enabled);
      list.reload();
    } catch (caught) {
      setFailure(messageOf(caught));
    }
  };
  const error = failure ?? list.error ?? sources.error;

  return (
    <section class="page stack">
      <h1 tabIndex={-1}>Schedules</h1>
      <p class="muted">A schedule scans a connector or syncs an integration on a cron, in UTC. A run still going when the next one is due is skipped and counted; a run missed while the service was down fires once when it starts.</p>
      {error && <Alert kind="error">{error}</Alert>}
      {list.value === null && !list.error && <p class="loading">Loading…</p>}
      {list.value && list.value.total === 0 && <p>No schedules yet.</p>}
      {list.value && list.value.total > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Schedules</caption>
            <thead>
              <tr>
                <th scope="col">Source</th>
                <th scope="col">Cron (UTC)</th>
                <th scope="col">Next run</th>
                <th scope="col">Last run</th>
                <th scope="col">Last outcome</th>
                <th scope="col">Skipped</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.value.schedules.map((schedule) => (
                <tr key={schedule.id}>
                  <td>
                    {nameOf(schedule)} <span class="muted">({schedule.source_type})</span>
                  </td>
                  <td>
                    <code>{schedule.cron}</code>
                  </td>
                  <td>{schedule.enabled ? formatDate(schedule.next_run) : <span class="badge">Disabled</span>}</td>
                  <td>{formatDate(schedule.last_run) || '—'}</td>
                  <td>{schedule.last_outcome ? OUTCOMES[schedule.last_outcome] : '—'}</td>
                  <td>{schedule.skipped_runs}</td>
                  <td class="row">
                    <button type="button" class="button-secondary button-small" onClick={() => void toggle(schedule)}>
                      {schedule.enabled ? 'Disable' : 'Enable'}
                    </button>
                    <button type="button" class="button-danger button-small" onClick={() => setDeleting(schedule)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section class="stack" aria-labelledby="new-schedule-title">
        <h2 id="new-schedule-title">New schedule</h2>
        {sources.value && <NewScheduleForm sources={sources.value} onCreated={list.reload} />}
      </section>
      {deleting && (
        <ConfirmDialog
          title="Delete this schedule?"
          confirmLabel="Delete schedule"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteSchedule(deleting.id);
            setDeleting(null);
            list.reload();
          }}
        >
          <p>
            {nameOf(deleting)} will no longer run on <code>{deleting.cron}</code>. Its documents stay.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
