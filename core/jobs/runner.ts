import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../clock.js';
import type { Job, JobResult, JobStore } from './job.js';

export interface JobContext {
  readonly signal: AbortSignal;
  /** Throws JobCancelled when cancellation was asked for (JobInterrupted when the service is stopping): work calls it between items. */
  checkpoint(): void;
  /** True once the service is stopping: what the work has not done is left to resume at the next start, not cancelled. */
  interrupted(): boolean;
  progress(done: number, total: number, current?: string): Promise<void>;
  /** Pages done of the current item's; the next progress() clears them. */
  pages(done: number, total: number): Promise<void>;
  /** What the work did, shown as the job's result (saved with the next state change). */
  report(result: JobResult): void;
}

type JobWork = (context: JobContext) => Promise<void>;

export class JobCancelled extends Error {
  constructor(message = 'cancelled') {
    super(message);
  }
}

/** A stop of the service, not a user's cancel: the work's queued items stay queued and resume at the next start. */
class JobInterrupted extends JobCancelled {
  constructor() {
    super('interrupted by a stop of the service');
  }
}

/** A failure whose message is meant for the user; any other error shows as a generic one (details go to the log). */
export class JobFailure extends Error {}

/** What a job failed by any other error says. */
export const INTERNAL_ERROR = 'Internal error; see the service log';

/**
 * Runs background jobs one at a time, in order (ingestion saturates a 2-core box on its own),
 * publishing each state change to the store. Cancellation is cooperative: work stops at its
 * next checkpoint, between items, so what it committed stays consistent.
 */
export class JobRunner {
  private readonly controllers = new Map<string, AbortController>();
  /** Clean-ups of queued jobs for a cancel that comes before they start (their work never runs). */
  private readonly unstarted = new Map<string, () => Promise<void>>();
  private tail: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(readonly store: JobStore, private readonly log: FastifyBaseLogger) {}

  /** `cancelledUnstarted` runs if the job is cancelled while still queued (not at shutdown: queued work resumes at the next start). */
  async enqueue(type: string, work: JobWork, subject?: Job['subject'], cancelledUnstarted?: () => Promise<void>): Promise<Job> {
    const job: Job = { id: randomUUID(), type, state: 'queued', progress: { done: 0, total: 0 }, created_at: clock.iso(), ...(subject ? { subject } : {}) };
    await this.store.save(job);
    const controller = new AbortController();
    this.controllers.set(job.id, controller);
    if (cancelledUnstarted) this.unstarted.set(job.id, cancelledUnstarted);
    this.tail = this.tail.then(() => this.run(job, work, controller));
    return structuredClone(job);
  }

  /** Asks a queued or running job to stop; false when it already finished. */
  async cancel(id: string): Promise<boolean> {
    const controller = this.controllers.get(id);
    if (!controller) return false;
    controller.abort(new JobCancelled());
    const job = await this.store.get(id);
    if (job?.state === 'queued') {
      await this.unstarted.get(id)?.().catch((error: unknown) => this.log.error({ err: error, job: id }, 'cleaning up a cancelled job failed'));
      await this.finish(job, 'cancelled');
    }
    return true;
  }

  /** Whether a job is queued or running. */
  busy(): boolean {
    return this.controllers.size > 0;
  }

  /** Resolves when every job enqueued so far has finished. */
  idle(): Promise<void> {
    return this.tail;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.controllers.values()) controller.abort(new JobInterrupted());
    await this.tail;
  }

  private async run(job: Job, work: JobWork, controller: AbortController): Promise<void> {
    this.unstarted.delete(job.id);
    const current = await this.store.get(job.id);
    if (!current || current.state !== 'queued') return void this.controllers.delete(job.id);
    if (controller.signal.aborted || this.closed) return this.finish(current, 'cancelled');

    current.state = 'running';
    current.started_at = clock.iso();
    await this.store.save(current);
    const context: JobContext = {
      signal: controller.signal,
      checkpoint: () => {
        if (controller.signal.aborted) throw controller.signal.reason instanceof JobInterrupted ? new JobInterrupted() : new JobCancelled();
      },
      interrupted: () => controller.signal.reason instanceof JobInterrupted,
      progress: async (done, total, item) => {
        current.progress = { done, total, ...(item ? { current: item } : {}) };
        await this.store.save(current);
      },
      pages: async (done, total) => {
        current.progress = { ...current.progress, pages: { done, total } };
        await this.store.save(current);
      },
      report: (result) => {
        current.result = result;
      },
    };
    try {
      await work(context);
      await this.finish(current, controller.signal.aborted ? 'cancelled' : 'succeeded');
    } catch (error) {
      if (error instanceof JobCancelled || controller.signal.aborted) return this.finish(current, 'cancelled');
      this.log.error({ err: error, job: job.id, type: job.type }, 'job failed');
      await this.finish(current, 'failed', error instanceof JobFailure ? error.message : INTERNAL_ERROR);
    }
  }

  private async finish(job: Job, state: Job['state'], error?: string): Promise<void> {
    this.controllers.delete(job.id);
    await this.store.save({ ...job, state, finished_at: clock.iso(), ...(error ? { error } : {}) });
  }
}
