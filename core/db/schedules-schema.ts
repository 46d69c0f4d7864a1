/** Tables of the schedules and their leader lock (migration 0010). Timestamps are epoch ms. */

export type ScheduleOutcome = 'started' | 'skipped_running' | 'skipped_disabled' | 'failed';

export interface SchedulesTable {
  id: string;
  /** Exactly one of connector_id and integration_id is set; the source's delete cascades here. */
  connector_id: string | null;
  integration_id: string | null;
  /** 5-field cron, evaluated in UTC. */
  cron: string;
  enabled: number;
  /** When the schedule last started its source's run. */
  last_run: number | null;
  /** When it fires next; null while disabled. A time in the past at start is a run missed while down. */
  next_run: number | null;
  last_outcome: ScheduleOutcome | null;
  last_job_id: string | null;
  /** Ticks skipped because the source's previous run was still going. */
  skipped_runs: number;
  created_at: number;
  updated_at: number;
}

export interface SchedulerLeaderLockTable {
  name: string;
  /** The process holding the lock (host, pid, random). */
  owner: string;
  /** The holder renews it at a third of the TTL; past this instant anyone may take it. */
  expires_at: number;
}
