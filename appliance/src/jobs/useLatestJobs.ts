import { useEffect, useRef, useState } from 'preact/hooks';
import type { Job } from '../api/types';
import { getJob, isFinished, listJobs } from './api';

const POLL_MS = 1000;

/**
 * The latest job of one type per subject (a connector's last scan, an integration's last sync), followed live:
 * every running or queued one is read again through GET /api/jobs/{id} until it finishes. The job store is in
 * memory, so after a restart a subject has no job until its next run.
 */
export function useLatestJobs(type: string, subjectOf: (job: Job) => string | undefined, onFinished: (job: Job) => void) {
  const [jobs, setJobs] = useState<Map<string, Job>>(new Map());
  const finished = useRef(onFinished);
  finished.current = onFinished;

  useEffect(() => {
    let cancelled = false;
    listJobs({ type, limit: 500, offset: 0 }).then(
      (page) => {
        if (cancelled) return;
        const latest = new Map<string, Job>();
        // Newest first: the first job seen for a subject is its latest.
        for (const job of page.jobs) {
          const subject = subjectOf(job);
          if (subject && !latest.has(subject)) latest.set(subject, job);
        }
        setJobs((tracked) => new Map([...latest, ...tracked]));
      },
      () => undefined, // The page works without the history; a new run is still followed.
    );
    return () => void (cancelled = true);
  }, [type]);

  // Each poll stores a new map, which schedules the next one while anything is still running.
  useEffect(() => {
    const active = [...jobs.values()].filter((job) => !isFinished(job));
    if (!active.length) return;
    const timer = setTimeout(async () => {
      const fresh = await Promise.all(active.map((job) => getJob(job.id).catch(() => job)));
      setJobs((current) => {
        const next = new Map(current);
        for (const job of fresh) {
          const subject = subjectOf(job);
          if (subject && next.get(subject)?.id === job.id) next.set(subject, job);
        }
        return next;
      });
      for (const job of fresh) if (isFinished(job)) finished.current(job);
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [jobs]);

  /** A run this page started (or the service returned as already running). */
  const track = (job: Job) => {
    const subject = subjectOf(job);
    if (subject) setJobs((current) => new Map(current).set(subject, job));
  };
  return { jobs, track };
}
