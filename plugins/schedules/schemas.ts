import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

export const SOURCE_TYPES = ['connector', 'integration'] as const;
export type ScheduleSourceType = (typeof SOURCE_TYPES)[number];
export const SCHEDULE_OUTCOMES = ['started', 'skipped_running', 'skipped_disabled', 'failed'] as const;
/** How many next runs a preview lists at most. */
export const MAX_PREVIEW_RUNS = 20;

const Cron = Type.String({
  minLength: 1,
  maxLength: 100,
  description: '5-field cron expression (minute hour day-of-month month day-of-week), evaluated in UTC, e.g. "0 3 * * *"; @hourly, @daily, @weekly, @monthly also accepted',
});
const Enabled = Type.Boolean({ description: 'Whether the schedule fires (default true)' });

export const CreateScheduleBody = Type.Object(
  {
    source_type: StringEnum(SOURCE_TYPES, { description: '`connector` (fires a scan) or `integration` (fires a sync)' }),
    source_id: Type.String({ minLength: 1, maxLength: 64, description: 'ID of the connector or integration' }),
    cron: Cron,
    enabled: Type.Optional(Enabled),
  },
  { additionalProperties: false },
);
export type CreateScheduleBody = Static<typeof CreateScheduleBody>;

export const UpdateScheduleBody = Type.Object(
  { cron: Type.Optional(Cron), enabled: Type.Optional(Enabled) },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateScheduleBody = Static<typeof UpdateScheduleBody>;

export const ScheduleView = Type.Object(
  {
    id: Type.String(),
    source_type: StringEnum(SOURCE_TYPES),
    source_id: Type.String(),
    cron: Type.String(),
    enabled: Type.Boolean(),
    last_run: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the schedule last started its source’s run' }),
    next_run: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it fires next; null while disabled' }),
    last_outcome: Type.Union([StringEnum(SCHEDULE_OUTCOMES), Type.Null()], {
      description: 'What the last tick that fired it did: started the run, skipped it (the previous run was still going, or the source is disabled), or failed',
    }),
    last_job_id: Type.Union([Type.String(), Type.Null()], { description: 'The job of the last run it started' }),
    skipped_runs: Type.Integer({ description: 'Ticks skipped because the source’s previous run was still going' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Schedule' },
);
export type ScheduleView = Static<typeof ScheduleView>;

export const ScheduleIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ScheduleList = Type.Object({ schedules: Type.Array(ScheduleView), total: Type.Integer() });

export const PreviewQuery = Type.Object(
  {
    cron: Cron,
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PREVIEW_RUNS, default: 5, description: `How many next runs (1..${MAX_PREVIEW_RUNS}, default 5)` })),
  },
  { additionalProperties: false },
);
export const PreviewView = Type.Object({ cron: Type.String(), next_runs: Type.Array(Type.String({ format: 'date-time' })) });
