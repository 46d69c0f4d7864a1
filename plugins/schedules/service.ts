import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Updateable } from 'kysely';
import { clock } from '../../core/clock.js';
import type { ScheduleOutcome, SchedulesTable } from '../../core/db/schedules-schema.js';
import { badRequest, HttpError, notFound } from '../../core/errors.js';
import { type Entitlement, tierAtLeast } from '../../core/tiers.js';
import { CronExpression } from './cron.js';
import type { ScheduleRow, SchedulesRepository } from './repository.js';
import type { CreateScheduleBody, ScheduleSourceType, ScheduleView, UpdateScheduleBody } from './schemas.js';

const iso = (ms: number | null) => (ms === null ? null : clock.iso(ms));

export function toScheduleView(row: ScheduleRow): ScheduleView {
  return {
    id: row.id,
    source_type: row.connector_id !== null ? 'connector' : 'integration',
    source_id: (row.connector_id ?? row.integration_id)!,
    cron: row.cron,
    enabled: row.enabled === 1,
    last_run: iso(row.last_run),
    next_run: iso(row.next_run),
    last_outcome: row.last_outcome,
    last_job_id: row.last_job_id,
    skipped_runs: row.skipped_runs,
    created_at: clock.iso(row.created_at),
    updated_at: clock.iso(row.updated_at),
  };
}

/** What a schedule needs of a source: whether it is enabled, whether a run of it is still going, and starting one. */
interface SourceState {
  enabled: boolean;
  running: boolean;
  start(): Promise<{ id: string }>;
}

export interface SchedulesServiceOptions {
  repository: SchedulesRepository;
  connectors: FastifyInstance['connectors'];
  integrations: FastifyInstance['integrations'];
  entitlement: Entitlement;
  /** SCHEDULER_LEADER_LOCK_ENABLED: false, every process fires on its own clock. */
  leaderLockEnabled: boolean;
  log: FastifyBaseLogger;
}

/**
 * Schedules (PRO or higher): CRUD, and the tick task that fires due schedules with the same job as
 * a manual scan or sync, one run at a time per source. Below PRO they are kept but do not fire.
 */
export class SchedulesService {
  /** Lock disabled: this process's previous tick; each process fires the occurrences since its own, so every process fires. */
  private previousTick: number | undefined;

  constructor(private readonly options: SchedulesServiceOptions) {}

  /** Schedules fire only on PRO or higher; below, they are kept as they are. */
  active(): boolean {
    return tierAtLeast(this.options.entitlement.tier(), 'PRO');
  }

  /** The schedules of the sources the reader may see (every one for the service itself). */
  async list(readerGroups?: string[]): Promise<ScheduleRow[]> {
    const rows = await this.options.repository.list();
    if (!readerGroups) return rows;
    const seen = await Promise.all(rows.map((row) => this.rowVisible(row, readerGroups)));
    return rows.filter((_, i) => seen[i]);
  }

  count(): Promise<number> {
    return this.options.repository.count();
  }

  /** A schedule of a source the reader may not see is not found: its id, cron and jobs would name the source. */
  async get(id: string, readerGroups?: string[]): Promise<ScheduleRow> {
    const row = await this.options.repository.findById(id);
    if (!row || !(await this.rowVisible(row, readerGroups))) throw notFound('Schedule');
    return row;
  }

  /** Every schedule for the service itself (its source is deleted with it); for a reader, one of a source they may see. */
  private async rowVisible(row: ScheduleRow, readerGroups?: string[]): Promise<boolean> {
    if (!readerGroups) return true;
    const view = toScheduleView(row);
    return this.sourceSeen(view.source_type, view.source_id, readerGroups);
  }

  /** Whether the source exists and, with reader groups, is one the reader may see (a hidden one is not found). */
  private async sourceSeen(type: ScheduleSourceType, id: string, readerGroups?: string[]): Promise<boolean> {
    return this.sourceState(type, id, readerGroups).then(
      () => true,
      (error: unknown) => {
        if (error instanceof HttpError && error.statusCode === 404) return false;
        throw error;
      },
    );
  }

  preview(cron: string, count: number): number[] {
    return CronExpression.parse(cron, 'querystring.cron').nextRuns(count);
  }

  /** A source the reader may not see is as unknown as one that does not exist. */
  async create(input: CreateScheduleBody, readerGroups?: string[]): Promise<ScheduleRow> {
    const cron = CronExpression.parse(input.cron);
    if (!(await this.sourceSeen(input.source_type, input.source_id, readerGroups))) {
      throw badRequest('unknown_source', `No ${input.source_type} with id ${input.source_id}`, 'body.source_id');
    }
    const id = randomUUID();
    const now = clock.now();
    const enabled = input.enabled !== false;
    await this.options.repository.insert({
      id,
      connector_id: input.source_type === 'connector' ? input.source_id : null,
      integration_id: input.source_type === 'integration' ? input.source_id : null,
      cron: input.cron.trim(),
      enabled: enabled ? 1 : 0,
      last_run: null,
      next_run: enabled ? cron.next(now) : null,
      last_outcome: null,
      last_job_id: null,
      skipped_runs: 0,
      created_at: now,
      updated_at: now,
    });
    return this.get(id);
  }

  /** A new cron or a re-enable plans the next run from now; disabling clears it. */
  async update(id: string, input: UpdateScheduleBody, readerGroups?: string[]): Promise<ScheduleRow> {
    const row = await this.get(id, readerGroups);
    const cron = CronExpression.parse(input.cron ?? row.cron);
    const enabled = input.enabled ?? row.enabled === 1;
    const now = clock.now();
    const change: Updateable<SchedulesTable> = { updated_at: now, enabled: enabled ? 1 : 0 };
    if (input.cron !== undefined) change.cron = input.cron.trim();
    if (!enabled) change.next_run = null;
    else if (input.cron !== undefined || row.enabled !== 1) change.next_run = cron.next(now);
    await this.options.repository.update(id, change);
    return this.get(id);
  }

  async delete(id: string, readerGroups?: string[]): Promise<void> {
    await this.get(id, readerGroups);
    if (!(await this.options.repository.delete(id))) throw notFound('Schedule');
  }

  /** The tick task: fires every due schedule once; a run missed while the service was down is due at the first tick. */
  async fireDue(now: number): Promise<void> {
    if (!this.active()) return;
    for (const row of await this.dueRows(now)) {
      await this.fire(row, now, CronExpression.parse(row.cron).next(now));
    }
  }

  private async dueRows(now: number): Promise<ScheduleRow[]> {
    if (this.options.leaderLockEnabled) return this.options.repository.listDue(now);
    const since = this.previousTick;
    this.previousTick = now;
    const enabled = await this.options.repository.listEnabled();
    // The first tick fires what was missed while down; later ones what came due since the last (not before a change).
    return enabled.filter((row) => since === undefined
      ? row.next_run !== null && row.next_run <= now
      : (CronExpression.parse(row.cron).next(Math.max(since, row.updated_at)) ?? Infinity) <= now);
  }

  private async fire(row: ScheduleRow, now: number, next: number | null): Promise<void> {
    const view = toScheduleView(row);
    let outcome: ScheduleOutcome;
    let jobId: string | null = null;
    try {
      const source = await this.sourceState(view.source_type, view.source_id);
      if (!source.enabled) outcome = 'skipped_disabled';
      else if (source.running) outcome = 'skipped_running';
      else {
        jobId = (await source.start()).id;
        outcome = 'started';
      }
    } catch (err) {
      this.options.log.error({ err, schedule: row.id }, 'scheduled run failed to start');
      outcome = 'failed';
    }
    const change: Updateable<SchedulesTable> = { next_run: next, last_outcome: outcome, ...(jobId ? { last_run: now, last_job_id: jobId } : {}) };
    await this.options.repository.recordFiring(row.id, change, outcome === 'skipped_running');
    this.options.log.info(
      { event: 'schedule.fire', schedule: row.id, source_type: view.source_type, source_id: view.source_id, outcome, ...(jobId ? { job: jobId } : {}) },
      outcome === 'started' ? 'scheduled run started' : 'scheduled run not started',
    );
  }

  private async sourceState(type: ScheduleSourceType, id: string, readerGroups?: string[]): Promise<SourceState> {
    if (type === 'connector') {
      const connector = await this.options.connectors.get(id, readerGroups);
      return { enabled: connector.enabled === 1, running: connector.scan_requested_at !== null, start: () => this.options.connectors.scan(id) };
    }
    const integration = await this.options.integrations.get(id, readerGroups);
    return { enabled: integration.enabled === 1, running: integration.sync_requested_at !== null, start: () => this.options.integrations.sync(id) };
  }
}
