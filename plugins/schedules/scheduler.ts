import type { FastifyBaseLogger } from 'fastify';
import { AsyncTask, SimpleIntervalJob, ToadScheduler } from 'toad-scheduler';
import { clock } from '../../core/clock.js';
import { Serial } from '../../core/serial.js';
import { CronExpression } from './cron.js';
import type { LeaderLock } from './leader-lock.js';

/** Work the scheduler runs on the leader only. */
export interface ScheduledTask {
  name: string;
  /** At each instant of this cron (UTC); absent: at every tick. */
  cron?: string;
  /** Also at the first tick this process leads (a daily sweep on a box restarted more often than daily). */
  atStart?: boolean;
  run(now: number): Promise<void>;
}

interface Registered {
  task: ScheduledTask;
  cron: CronExpression | undefined;
  due: number;
}

export interface SchedulerOptions {
  tickMs: number;
  /** How often the lock is renewed (by the leader) or tried (by the others): a third of its TTL. */
  renewMs: number;
}

/**
 * The tick loop (toad-scheduler): every tick, the process that holds the leader lock runs the due
 * tasks, one tick at a time; the others keep trying the lock, so one takes over once it expires.
 */
export class Scheduler {
  private readonly toad = new ToadScheduler();
  private readonly tasks: Registered[] = [];
  private leading = false;
  private readonly running = new Serial();
  private stopped = false;

  constructor(private readonly lock: LeaderLock, private readonly options: SchedulerOptions, private readonly log: FastifyBaseLogger) {}

  add(task: ScheduledTask): void {
    const cron = task.cron === undefined ? undefined : CronExpression.parse(task.cron, task.name);
    this.tasks.push({ task, cron, due: task.atStart || !cron ? 0 : (cron.next(clock.now()) ?? Infinity) });
  }

  /** True while this process holds the lock (always, with the lock disabled). */
  isLeader(): boolean {
    return this.leading;
  }

  /** Ticks at once (a run missed while the service was down fires now), then every tickMs. */
  start(): void {
    const onError = (err: Error) => this.log.error({ err }, 'scheduler tick failed');
    this.toad.addSimpleIntervalJob(new SimpleIntervalJob(
      { milliseconds: this.options.tickMs, runImmediately: true },
      new AsyncTask('tick', () => this.track(() => this.tick()), onError),
      { id: 'tick', preventOverrun: true },
    ));
    this.toad.addSimpleIntervalJob(new SimpleIntervalJob(
      { milliseconds: this.options.renewMs },
      new AsyncTask('leader-lock', () => this.track(async () => void (await this.holdLock())), onError),
      { id: 'leader-lock', preventOverrun: true },
    ));
  }

  /** Stops ticking, waits for a tick in progress, and hands the lock over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.toad.stop();
    await this.running.settled();
    if (this.leading) await this.lock.release().catch((err: unknown) => this.log.warn({ err }, 'releasing the scheduler lock failed'));
    this.leading = false;
  }

  private track(work: () => Promise<void>): Promise<void> {
    return this.running.run(async () => (this.stopped ? undefined : work()));
  }

  private async holdLock(): Promise<boolean> {
    const leading = await this.lock.acquire();
    if (leading !== this.leading) {
      this.log.info({ event: leading ? 'scheduler.leader' : 'scheduler.follower', owner: this.lock.owner }, leading ? 'scheduler leadership acquired' : 'scheduler leadership lost');
    }
    this.leading = leading;
    return leading;
  }

  private async tick(): Promise<void> {
    if (!(await this.holdLock())) return;
    const now = clock.now();
    for (const entry of this.tasks) {
      if (entry.due > now) continue;
      entry.due = entry.cron ? (entry.cron.next(now) ?? Infinity) : 0;
      try {
        await entry.task.run(now);
      } catch (err) {
        this.log.error({ err, task: entry.task.name }, 'scheduled task failed');
      }
    }
  }
}
