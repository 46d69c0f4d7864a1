import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { clock } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';

/**
 * Which one of several processes sharing the store fires the scheduler's ticks. The embedded
 * implementation is a SQLite row; a Redis one (SET NX PX, renewed by its holder) fits the same shape.
 */
export interface LeaderLock {
  /** Who this process is, as the lock records it. */
  readonly owner: string;
  /** Takes the lock when free or expired, or renews it when already held; true while this process holds it. */
  acquire(): Promise<boolean>;
  /** Gives the lock up at once (a clean stop), so another process need not wait for the TTL. */
  release(): Promise<void>;
}

const LOCK_NAME = 'scheduler';

/** A lock row with an owner and an expiry, taken and renewed by one atomic upsert. */
export class SqliteLeaderLock implements LeaderLock {
  readonly owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(private readonly db: Db, private readonly ttlMs: number) {}

  async acquire(): Promise<boolean> {
    const now = clock.now();
    const result = await this.db
      .insertInto('scheduler_leader_lock')
      .values({ name: LOCK_NAME, owner: this.owner, expires_at: now + this.ttlMs })
      .onConflict((conflict) =>
        conflict
          .column('name')
          .doUpdateSet({ owner: this.owner, expires_at: now + this.ttlMs })
          .where((eb) => eb.or([eb('scheduler_leader_lock.owner', '=', this.owner), eb('scheduler_leader_lock.expires_at', '<=', now)])),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async release(): Promise<void> {
    await this.db.deleteFrom('scheduler_leader_lock').where('name', '=', LOCK_NAME).where('owner', '=', this.owner).execute();
  }
}

/** SCHEDULER_LEADER_LOCK_ENABLED=false: every process fires every tick. */
export class NoLeaderLock implements LeaderLock {
  readonly owner = `${os.hostname()}:${process.pid}`;

  async acquire(): Promise<boolean> {
    return true;
  }

  async release(): Promise<void> {}
}
