import type { Job } from '../api/types';
import { formatDate } from '../components/format';
import { JobProgress } from './JobProgress';

interface Props {
  /** The latest job of this source, if the service still holds it. */
  job?: Job;
  /** When the source last completed a run (stored with the source, so it survives a restart). */
  lastAt: string | null;
  /** "scan" or "sync". */
  noun: string;
  /** The source's name, for the progress bar's accessible name. */
  subject: string;
}

/** A source's run in progress, or the summary of its last one. */
export function LastRun({ job, lastAt, noun, subject }: Props) {
  const running = job && (job.state === 'queued' || job.state === 'running');
  return (
    <div class="last-run">
      <h3 class="label">{running ? `${noun[0].toUpperCase()}${noun.slice(1)} in progress` : `Last ${noun}`}</h3>
      {job ? (
        <JobProgress job={job} label={`${noun[0].toUpperCase()}${noun.slice(1)} of ${subject}`} />
      ) : (
        <p class="muted">{lastAt ? `Completed ${formatDate(lastAt)}.` : `Never run yet.`}</p>
      )}
    </div>
  );
}
