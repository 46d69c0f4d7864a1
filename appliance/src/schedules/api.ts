import { api } from '../api/client';

export type SourceType = 'connector' | 'integration';

/** A cron schedule that fires a connector scan or an integration sync (docs/schedules.md). */
export interface Schedule {
  id: string;
  source_type: SourceType;
  source_id: string;
  cron: string;
  enabled: boolean;
  last_run: string | null;
  next_run: string | null;
  last_outcome: 'started' | 'skipped_running' | 'skipped_disabled' | 'failed' | null;
  last_job_id: string | null;
  skipped_runs: number;
}

export interface ScheduleFields {
  source_type: SourceType;
  source_id: string;
  cron: string;
  enabled: boolean;
}

const one = (id: string) => `/api/schedules/${encodeURIComponent(id)}`;

export const listSchedules = () => api<{ schedules: Schedule[]; total: number }>('/api/schedules');
export const createSchedule = (fields: ScheduleFields) => api<Schedule>('/api/schedules', { method: 'POST', body: fields });
export const setEnabled = (id: string, enabled: boolean) => api<Schedule>(one(id), { method: 'PUT', body: { enabled } });
export const deleteSchedule = (id: string) => api<null>(one(id), { method: 'DELETE' });
export const previewCron = (cron: string, signal?: AbortSignal) =>
  api<{ cron: string; next_runs: string[] }>('/api/schedules/preview', { query: { cron, count: 5 }, signal });
/** Names for the source picker and the table. */
export const listSourceNames = async (): Promise<Array<{ type: SourceType; id: string; name: string }>> => {
  const [connectors, integrations] = await Promise.all([
    api<{ connectors: Array<{ id: string; name: string }> }>('/api/connectors'),
    api<{ integrations: Array<{ id: string; name: string }> }>('/api/integrations', { query: { limit: 200 } }),
  ]);
  return [
    ...connectors.connectors.map((source) => ({ type: 'connector' as const, id: source.id, name: source.name })),
    ...integrations.integrations.map((source) => ({ type: 'integration' as const, id: source.id, name: source.name })),
  ];
};
