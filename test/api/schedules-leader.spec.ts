import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';
import { LICENSE_ENV, licenseKey } from '../fixtures/license.js';
import { cleanupServices, ensureBuilt, listening, type Service, startService, tempDir, waitFor } from '../fixtures/service-process.js';

/**
 * The leader lock with two real service processes sharing one DATA_DIR (one SQLite file): exactly one
 * of them fires each tick; SIGKILL the leader and the other takes the lock once its TTL has run out,
 * then fires the next tick. Cron is minute-grained, so this test waits for two minute boundaries.
 */

const TTL_SECONDS = 6;
const TICK_SECONDS = 1;

let dataDir: string;
let docs: string;

beforeAll(() => {
  ensureBuilt();
  dataDir = tempDir('hearth-leader-');
  docs = path.join(tempDir('hearth-leader-docs-'), 'docs');
  mkdirSync(docs);
}, 300_000);
afterAll(() => cleanupServices());

function boot(): Service {
  return startService({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    JWT_SECRET_KEY: 'leader-test-secret-that-is-long-enough-for-hs256',
    MFA_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
    LOG_LEVEL: 'INFO',
    CONNECTOR_ALLOWED_PATHS: `/app/docs:${path.dirname(docs)}`,
    SCHEDULER_LEADER_LOCK_TTL_SECONDS: String(TTL_SECONDS),
    SCHEDULER_TICK_SECONDS: String(TICK_SECONDS),
    ...LICENSE_ENV,
  });
}

async function call(url: string, token: string | null, method: string, route: string, body?: object): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}

const fires = (service: Service) => service.logs().filter((line) => line.event === 'schedule.fire');
const leaderships = (service: Service) => service.logs().filter((line) => line.event === 'scheduler.leader');
const minuteOf = (line: Record<string, unknown>) => Math.floor((line.time as number) / 60_000);

describe('the scheduler leader lock across two processes', () => {
  it('one process fires each tick; when the leader is killed the other takes over within the TTL and fires the next tick', async () => {
    const a = boot();
    const urlA = await listening(a, 30_000);
    const token = (await call(urlA, null, 'POST', '/api/auth/login', { username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD })).json.access_token as string;
    expect((await call(urlA, token, 'POST', '/api/license', { license_key: licenseKey('PRO') })).status).toBe(200);
    const connector = await call(urlA, token, 'POST', '/api/connectors', { name: 'docs', path: docs });
    expect(connector.status).toBe(201);
    const schedule = await call(urlA, token, 'POST', '/api/schedules', { source_type: 'connector', source_id: connector.json.id, cron: '* * * * *' });
    expect(schedule.status).toBe(201);
    await waitFor('A to lead', a, () => leaderships(a).length === 1);

    // B starts after the licence is stored, so it reads the same PRO entitlement.
    const b = boot();
    const urlB = await listening(b, 30_000);
    await waitFor('the first scheduled run', a, () => fires(a).length + fires(b).length > 0, 75_000, 100);
    // A tick later, nothing more fired this minute.
    await new Promise((resolve) => setTimeout(resolve, 2_000 * TICK_SECONDS));
    expect(fires(a)).toHaveLength(1);
    expect(fires(b)).toHaveLength(0);
    expect(leaderships(b)).toHaveLength(0);
    expect(fires(a)[0]).toMatchObject({ schedule: schedule.json.id, outcome: 'started' });

    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    const takeover = await waitFor('B to take the lock', b, () => leaderships(b)[0], (TTL_SECONDS + 10) * 1000, 50);
    // The lock expires at most one TTL after A's last renewal (before the kill); B tries it every tick.
    expect(takeover.time as number).toBeGreaterThan(killedAt);
    expect((takeover.time as number) - killedAt).toBeLessThanOrEqual((TTL_SECONDS + TICK_SECONDS) * 1000 + 1_000);

    await waitFor('B to fire the next tick', b, () => fires(b).length > 0, 75_000, 100);
    expect(fires(b)[0]).toMatchObject({ schedule: schedule.json.id, outcome: 'started' });
    const minutes = [...fires(a), ...fires(b)].map(minuteOf);
    expect(new Set(minutes).size).toBe(minutes.length);

    const seen = await call(urlB, token, 'GET', `/api/schedules/${schedule.json.id}`);
    expect(seen.status).toBe(200);
    expect(seen.json.last_job_id).toBe(fires(b)[0].job);
  }, 240_000);
});
