import { clock } from '../clock.js';
import { type Job, type JobListFilter, type JobStore, TERMINAL_STATES } from './job.js';

/** Job snapshots in memory; terminal ones expire after JOB_STATE_TTL_SECONDS, in-flight ones never. */
export class MemoryJobStore implements JobStore {
  private readonly jobs = new Map<string, { job: Job; expiresAt: number }>();

  constructor(private readonly ttlSeconds: number) {}

  async save(job: Job): Promise<void> {
    const terminal = TERMINAL_STATES.includes(job.state);
    this.jobs.delete(job.id); // re-insert keeps the map in creation order of the latest save
    this.jobs.set(job.id, { job: structuredClone(job), expiresAt: terminal ? clock.now() + this.ttlSeconds * 1000 : Infinity });
  }

  async get(id: string): Promise<Job | undefined> {
    this.sweep();
    const entry = this.jobs.get(id);
    return entry ? structuredClone(entry.job) : undefined;
  }

  async list(filter: JobListFilter): Promise<{ jobs: Job[]; total: number }> {
    this.sweep();
    const matching = [...this.jobs.values()]
      .map((entry) => entry.job)
      .filter((job) => (!filter.state || job.state === filter.state) && (!filter.type || job.type === filter.type))
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    return { jobs: matching.slice(filter.offset, filter.offset + filter.limit).map((job) => structuredClone(job)), total: matching.length };
  }

  async close(): Promise<void> {
    this.jobs.clear();
  }

  private sweep(): void {
    const now = clock.now();
    for (const [id, entry] of this.jobs) if (entry.expiresAt <= now) this.jobs.delete(id);
  }
}
