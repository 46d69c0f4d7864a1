import { Type } from 'typebox';
import type { JobResult } from '../../core/jobs/job.js';
import { StringEnum } from '../../core/schemas.js';
import { RunSummary } from './run-summary.js';

const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const JobView = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    state: StringEnum(JOB_STATES),
    progress: Type.Object({
      done: Type.Integer(),
      total: Type.Integer(),
      current: Type.Optional(Type.String()),
      /** Pages read of the current document's (PDFs, scans). */
      pages: Type.Optional(Type.Object({ done: Type.Integer(), total: Type.Integer() })),
    }),
    error: Type.Optional(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    started_at: Type.Optional(Type.String({ format: 'date-time' })),
    finished_at: Type.Optional(Type.String({ format: 'date-time' })),
    subject: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
    /** What a connector scan or integration sync did, once it ended (typed loosely: core/jobs knows no job's result shape). */
    result: Type.Optional(Type.Unsafe<JobResult>({
      anyOf: [RunSummary, { type: 'object', additionalProperties: true, description: 'The result of another job type (metadata.refresh: see POST /api/metadata/{source_id}/refresh)' }],
    })),
  },
  { $id: 'Job' },
);

export const JobIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ListJobsQuery = Type.Object(
  {
    state: Type.Optional(StringEnum(JOB_STATES)),
    type: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const JobList = Type.Object({ jobs: Type.Array(JobView), total: Type.Integer() });
