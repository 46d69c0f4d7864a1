import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import type { Job, JobState } from '../api/types';
import { Alert } from '../components/Alert';
import { SelectField } from '../components/Field';
import { useLoad } from '../components/useLoad';
import { formatDate } from '../components/format';
import { Pagination } from '../components/Pagination';
import { roleAtLeast, session } from '../session/session';
import { useStore } from '../store';
import { listConnectors } from '../connectors/api';
import { listIntegrations } from '../integrations/api';
import { cancelJob, isFinished, JOB_TYPE_LABEL, jobTypeLabel, listJobs } from './api';
import { JobProgress } from './JobProgress';

const PAGE_SIZE = 25;
const POLL_MS = 1500;

const STATES: [JobState | '', string][] = [['', 'Any state'], ['queued', 'Queued'], ['running', 'Running'], ['succeeded', 'Succeeded'], ['failed', 'Failed'], ['cancelled', 'Cancelled']];
const TYPES: [string, string][] = [['', 'Any type'], ...Object.entries(JOB_TYPE_LABEL)];

/** What a job is about: the connector or website its subject names by id, or how many documents. */
function subjectText(job: Job, names: Map<string, string>): string | null {
  const subject = job.subject ?? {};
  if (typeof subject.connector_id === 'string') return names.get(subject.connector_id) ?? 'a connector';
  if (typeof subject.integration_id === 'string') return names.get(subject.integration_id) ?? 'a website';
  if (Array.isArray(subject.document_ids)) return `${subject.document_ids.length} document${subject.document_ids.length === 1 ? '' : 's'}`;
  return null;
}

/** The names of the connectors and websites, for the jobs that hold only their ids; a job reads fine without. */
function useSourceNames(): Map<string, string> {
  const [names, setNames] = useState(new Map<string, string>());
  useEffect(() => {
    Promise.all([listConnectors().catch(() => ({ connectors: [] })), listIntegrations(0).catch(() => ({ integrations: [] }))]).then(([connectors, integrations]) =>
      setNames(new Map([...connectors.connectors, ...integrations.integrations].map((source): [string, string] => [source.id, source.name]))),
    );
  }, []);
  return names;
}

export default function JobsPage() {
  const { user } = useStore(session);
  const canCancel = roleAtLeast(user?.role, 'editor');
  const [state, setState] = useState<JobState | ''>('');
  const [type, setType] = useState('');
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => listJobs({ state: state || undefined, type: type || undefined, limit: PAGE_SIZE, offset }), [state, type, offset]);
  const page = list.value;
  const [failure, setError] = useState<string | null>(null);
  const error = failure ?? list.error;
  const names = useSourceNames();

  // While a listed job is still queued or running, the list is read again.
  const running = page?.jobs.some((job) => !isFinished(job)) ?? false;
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(list.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [running, page]);

  const cancel = async (job: Job) => {
    try {
      await cancelJob(job.id);
    } catch (caught) {
      setError(messageOf(caught));
    }
    list.reload();
  };

  const filter = <T,>(set: (value: T) => void) => (value: T) => (set(value), setOffset(0));
  return (
    <section class="page stack">
      <h1 tabIndex={-1}>Jobs</h1>
      <p class="muted">Background work: connector scans, website syncs, indexing and index rebuilds, one at a time. The list starts empty after a restart.</p>
      <div class="two-columns">
        <SelectField label="State" value={state} onValue={filter(setState)} options={STATES} />
        <SelectField label="Type" value={type} onValue={filter(setType)} options={TYPES} />
      </div>
      {error && <Alert kind="error">{error}</Alert>}
      {page === null && !error && <p class="loading">Loading…</p>}
      {page?.jobs.length === 0 && <p class="muted">No jobs{state || type ? ' match these filters' : ' yet'}.</p>}
      {page && page.jobs.length > 0 && (
        <ul class="card-list" aria-label="Jobs">
          {page.jobs.map((job) => (
            <li key={job.id} class="card">
              <div class="card-head">
                <h2 class="card-title">{jobTypeLabel(job.type)}</h2>
                {subjectText(job, names) && <span class="muted">of {subjectText(job, names)}</span>}
                <span class="muted">started {formatDate(job.started_at ?? job.created_at)}</span>
                {canCancel && !isFinished(job) && (
                  <button type="button" class="button-secondary button-small card-action" onClick={() => void cancel(job)} aria-label={`Cancel the ${jobTypeLabel(job.type).toLowerCase()} started ${formatDate(job.created_at)}`}>
                    Cancel
                  </button>
                )}
              </div>
              <JobProgress job={job} />
            </li>
          ))}
        </ul>
      )}
      {page && <Pagination offset={offset} pageSize={PAGE_SIZE} total={page.total} onOffset={setOffset} />}
    </section>
  );
}
