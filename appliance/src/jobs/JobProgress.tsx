import type { Job } from '../api/types';
import { formatDate } from '../components/format';
import { ProgressBar } from '../components/ProgressBar';
import { isFinished, jobTypeLabel } from './api';
import './jobs.css';

const STATE_LABEL: Record<Job['state'], string> = { queued: 'Queued', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', cancelled: 'Cancelled' };

export function JobState({ job }: { job: Job }) {
  return <span class={`badge badge-job-${job.state}`}>{STATE_LABEL[job.state]}</span>;
}

/** "3 of 10"; a count the job has not learnt yet is not shown as 0 of 0. */
const counted = (job: Job) => (job.progress.total > 0 ? `${job.progress.done} of ${job.progress.total}` : null);

interface Props {
  job: Job;
  /** The subject the bar is about, for its accessible name ("Scan of Handbooks"). */
  label?: string;
}

/**
 * One job as it stands: while it runs, a progress bar, the count and the item in hand; once finished, its outcome,
 * the final message (a scan's summary) and when. `current` and `error` come from files and sites: text only.
 */
export function JobProgress({ job, label = jobTypeLabel(job.type) }: Props) {
  const finished = isFinished(job);
  const fraction = job.progress.total > 0 ? Math.min(1, job.progress.done / job.progress.total) : null;
  return (
    <div class="job-progress">
      <div class="job-line">
        {/* Announced when the state changes, not at every step of the count. */}
        <span role="status">
          <JobState job={job} />
        </span>
        {!finished && counted(job) && <span class="muted">{counted(job)}</span>}
        {finished && job.finished_at && <span class="muted">{formatDate(job.finished_at)}</span>}
      </div>
      {!finished && <ProgressBar label={`${label}: progress`} value={job.state === 'queued' ? null : fraction} />}
      {job.progress.current && <p class="job-current untrusted">{job.progress.current}</p>}
      {job.error && <p class="error-text job-current untrusted">{job.error}</p>}
    </div>
  );
}
