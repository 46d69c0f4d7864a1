import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cron } from 'croner';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { startSite, type TestSite } from '../fixtures/web-site.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

/**
 * Schedules through HTTP on a real app and SQLite file. The tick loop runs for real (every second
 * here); time is moved with vitest's fake Date only, so a schedule comes due without waiting minutes.
 */

const MINUTE = 60_000;
let root: string;
let t: TestApp;
let admin: string;
let editor: string;
let viewer: string;
let folders = 0;

beforeAll(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'hearth-schedules-root-')));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  vi.useRealTimers();
  await t?.close();
});

const ENV = { ...LICENSE_ENV, SCHEDULER_TICK_SECONDS: '1' };

async function start(tier: 'FREE' | 'PRO' | 'ENTERPRISE', extraEnv: Record<string, string> = {}): Promise<void> {
  t = await startApp({ ...ENV, CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}`, ...extraEnv });
  if (tier !== 'FREE') await applyLicense(t, tier);
  admin = (await t.login()).access;
  editor = (await t.userWithRole('editor')).access;
  viewer = (await t.userWithRole('viewer')).access;
}

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token?: string, payload?: object) =>
  t.request({ method, url, ...(token ? { token } : {}), ...(payload ? { payload } : {}) });

async function connector(): Promise<string> {
  const dir = path.join(root, `docs-${++folders}`);
  mkdirSync(dir);
  const res = await api('POST', '/api/connectors', admin, { name: `docs ${folders}`, path: dir });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function createSchedule(body: object): Promise<Record<string, unknown> & { id: string }> {
  const res = await api('POST', '/api/schedules', admin, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const getSchedule = async (id: string) => (await api('GET', `/api/schedules/${id}`, admin)).json();

/** Freezes Date (timers stay real, so the tick loop keeps ticking) at the given instant. */
function freezeAt(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(ms);
}

/** Polls until probe answers truthy (the tick loop is real time, one tick a second here). */
async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Real time passes for this long (ticks happen) while Date stays frozen. */
const ticksPass = (ms = 2_500) => new Promise((resolve) => setTimeout(resolve, ms));

const scanJobs = async (connectorId: string, app = t) =>
  ((await app.request({ method: 'GET', url: '/api/jobs?limit=100', token: viewer })).json().jobs as Array<{ type: string; subject?: Record<string, string> }>).filter(
    (job) => job.type === 'connector.scan' && job.subject?.connector_id === connectorId,
  );

const nextUtc = (cron: string, after: number) => new Cron(cron, { timezone: 'UTC' }).nextRun(new Date(after))!.toISOString();

describe('schedules: roles and tiers', { timeout: 90_000 }, () => {
  it('admin only on PRO and ENTERPRISE; 403 tier_required below PRO, role_required for viewer and editor, 401 without a token', async () => {
    await start('FREE');
    const routes: Array<[ 'GET' | 'POST' | 'PUT' | 'DELETE', string, object?]> = [
      ['GET', '/api/schedules'],
      ['GET', '/api/schedules/preview?cron=0%203%20*%20*%20*'],
      ['POST', '/api/schedules', { source_type: 'connector', source_id: 'x', cron: '0 3 * * *' }],
      ['GET', '/api/schedules/some-id'],
      ['PUT', '/api/schedules/some-id', { enabled: false }],
      ['DELETE', '/api/schedules/some-id'],
    ];
    for (const [method, url, body] of routes) {
      const res = await api(method, url, admin, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().error.code).toBe('tier_required');
    }
    await t.close();

    for (const tier of ['PRO', 'ENTERPRISE'] as const) {
      await start(tier);
      const id = await connector();
      for (const [method, url, body] of routes) {
        for (const token of [viewer, editor]) {
          const res = await api(method, url, token, body);
          expect(res.statusCode, `${tier} ${method} ${url}`).toBe(403);
          expect(res.json().error.code).toBe('role_required');
        }
        expect((await api(method, url, undefined, body)).statusCode).toBe(401);
      }
      const created = await createSchedule({ source_type: 'connector', source_id: id, cron: '0 3 * * *' });
      expect((await api('GET', '/api/schedules', admin)).json()).toMatchObject({ total: 1, schedules: [{ id: created.id }] });
      expect((await api('GET', `/api/schedules/${created.id}`, admin)).statusCode).toBe(200);
      expect((await api('PUT', `/api/schedules/${created.id}`, admin, { enabled: false })).statusCode).toBe(200);
      expect((await api('GET', '/api/schedules/preview?cron=0%203%20*%20*%20*', admin)).statusCode).toBe(200);
      expect((await api('DELETE', `/api/schedules/${created.id}`, admin)).statusCode).toBe(204);
      await t.close();
    }
  }, 90_000);
});

describe('schedules: CRUD', { timeout: 90_000 }, () => {
  it('creates with next_run computed in UTC, lists, reads, updates, previews and deletes', async () => {
    await start('PRO');
    const connectorId = await connector();
    const now = Date.now();
    const created = await createSchedule({ source_type: 'connector', source_id: connectorId, cron: '30 2 * * 1-5' });
    expect(created).toMatchObject({
      source_type: 'connector', source_id: connectorId, cron: '30 2 * * 1-5', enabled: true,
      last_run: null, last_outcome: null, last_job_id: null, skipped_runs: 0,
    });
    expect(created.next_run).toBe(nextUtc('30 2 * * 1-5', now));
    expect(new Date(created.next_run as string).getUTCHours()).toBe(2);

    expect((await api('GET', '/api/schedules', admin)).json()).toEqual({ schedules: [created], total: 1 });
    expect(await getSchedule(created.id)).toEqual(created);

    const disabled = (await api('PUT', `/api/schedules/${created.id}`, admin, { enabled: false })).json();
    expect(disabled).toMatchObject({ enabled: false, next_run: null, cron: '30 2 * * 1-5' });
    const changed = (await api('PUT', `/api/schedules/${created.id}`, admin, { cron: '@daily', enabled: true })).json();
    expect(changed).toMatchObject({ enabled: true, cron: '@daily' });
    expect(changed.next_run).toBe(nextUtc('0 0 * * *', Date.now()));

    const preview = (await api('GET', '/api/schedules/preview?cron=0%20*/6%20*%20*%20*&count=3', admin)).json();
    expect(preview.next_runs).toHaveLength(3);
    expect(preview.next_runs.map((iso: string) => new Date(iso).getUTCHours() % 6)).toEqual([0, 0, 0]);

    expect((await api('DELETE', `/api/schedules/${created.id}`, admin)).statusCode).toBe(204);
    expect((await api('GET', `/api/schedules/${created.id}`, admin)).statusCode).toBe(404);
    expect((await api('DELETE', `/api/schedules/${created.id}`, admin)).statusCode).toBe(404);
  });

  it('refuses bad input with a 400 naming the field, and changes nothing', async () => {
    await start('PRO');
    const connectorId = await connector();
    const kept = await createSchedule({ source_type: 'connector', source_id: connectorId, cron: '0 3 * * *' });
    const before = await snapshot(t.app, 'schedules');

    const bad: Array<[object, string, string]> = [
      [{ source_type: 'connector', source_id: connectorId, cron: '61 * * * *' }, 'invalid_cron', 'body.cron'],
      [{ source_type: 'connector', source_id: connectorId, cron: '* * * * * *' }, 'invalid_cron', 'body.cron'],
      [{ source_type: 'connector', source_id: connectorId, cron: 'every day' }, 'invalid_cron', 'body.cron'],
      [{ source_type: 'connector', source_id: connectorId, cron: '0 0 31 2 *' }, 'invalid_cron', 'body.cron'],
      [{ source_type: 'connector', source_id: 'no-such-connector', cron: '0 3 * * *' }, 'unknown_source', 'body.source_id'],
      [{ source_type: 'integration', source_id: connectorId, cron: '0 3 * * *' }, 'unknown_source', 'body.source_id'],
      [{ source_type: 'upload', source_id: connectorId, cron: '0 3 * * *' }, 'validation_failed', 'body.source_type'],
      [{ source_type: 'connector', source_id: connectorId, cron: 5 }, 'validation_failed', 'body.cron'],
      [{ source_type: 'connector', source_id: connectorId, cron: '0 3 * * *', enabled: 'yes' }, 'validation_failed', 'body.enabled'],
      [{ source_type: 'connector', source_id: connectorId }, 'validation_failed', 'body.cron'],
      [{ source_type: 'connector', source_id: connectorId, cron: '0 3 * * *', next_run: 'now' }, 'validation_failed', 'body.next_run'],
    ];
    for (const [body, code, field] of bad) {
      const res = await api('POST', '/api/schedules', admin, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toMatchObject({ code, field });
    }
    const badUpdates: Array<[object, string, string]> = [
      [{ cron: '0 25 * * *' }, 'invalid_cron', 'body.cron'],
      [{ enabled: 1 }, 'validation_failed', 'body.enabled'],
      [{ source_id: connectorId }, 'validation_failed', 'body.source_id'],
    ];
    for (const [body, code, field] of badUpdates) {
      const res = await api('PUT', `/api/schedules/${kept.id}`, admin, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toMatchObject({ code, field });
    }
    expect((await api('PUT', `/api/schedules/${kept.id}`, admin, {})).statusCode).toBe(400);
    const preview = await api('GET', '/api/schedules/preview?cron=1%202%203', admin);
    expect(preview.statusCode).toBe(400);
    expect(preview.json().error).toMatchObject({ code: 'invalid_cron', field: 'querystring.cron' });
    expect((await api('PUT', '/api/schedules/nope', admin, { enabled: false })).statusCode).toBe(404);
    expect(await snapshot(t.app, 'schedules')).toEqual(before);
  });
});

describe('schedules: firing', { timeout: 90_000 }, () => {
  it('fires a due schedule as the connector scan, records last_run and plans the next run', async () => {
    await start('PRO');
    const connectorId = await connector();
    // A minute past a 5-minute mark, so that the schedule cannot come due while the ticks below pass (on a real
    // clock, a schedule made a second before the mark fired at once).
    freezeAt(Math.ceil(Date.now() / (5 * MINUTE)) * 5 * MINUTE + MINUTE);
    const created = await createSchedule({ source_type: 'connector', source_id: connectorId, cron: '*/5 * * * *' });
    await ticksPass();
    expect(await scanJobs(connectorId)).toHaveLength(0);

    const due = Date.parse(created.next_run as string);
    freezeAt(due + 1_000);
    const fired = await until('the schedule to fire', async () => {
      const schedule = await getSchedule(created.id);
      return schedule.last_run ? schedule : undefined;
    });
    expect(fired).toMatchObject({ last_run: new Date(due + 1_000).toISOString(), last_outcome: 'started', next_run: new Date(due + 5 * MINUTE).toISOString() });
    const jobs = await scanJobs(connectorId);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ id: fired.last_job_id });
    await t.app.jobs.idle();
    expect((await api('GET', `/api/connectors/${connectorId}`, viewer)).json().last_scan).toMatchObject({ state: 'succeeded' });

    await ticksPass();
    expect(await scanJobs(connectorId)).toHaveLength(1);
  });

  it('a run missed while the service was down fires once at start', async () => {
    await start('PRO');
    const connectorId = await connector();
    const created = await createSchedule({ source_type: 'connector', source_id: connectorId, cron: '* * * * *' });
    const dataDir = t.dataDir;
    await t.app.close();

    const restartAt = Date.parse(created.next_run as string) + 10 * MINUTE + 30_000;
    freezeAt(restartAt);
    t = await startApp({ ...ENV, CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` }, dataDir, true);
    admin = (await t.login()).access;
    viewer = admin;
    const fired = await until('the missed run', async () => {
      const schedule = await getSchedule(created.id);
      return schedule.last_run ? schedule : undefined;
    });
    expect(fired).toMatchObject({ last_run: new Date(restartAt).toISOString(), next_run: nextUtc('* * * * *', restartAt), last_outcome: 'started' });
    await ticksPass();
    expect(await scanJobs(connectorId)).toHaveLength(1);
  });

  it('one run at a time per source: a tick while the previous sync still runs is skipped and counted', async () => {
    const site: TestSite = await startSite();
    try {
      site.set('/', { hang: true });
      await start('PRO');
      const res = await api('POST', '/api/integrations', admin, { name: 'slow site', kind: 'web', config: { start_url: `${site.origin}/`, allow_private_network: true } });
      expect(res.statusCode, res.body).toBe(201);
      const integrationId = res.json().id;
      const created = await createSchedule({ source_type: 'integration', source_id: integrationId, cron: '* * * * *' });

      const first = Date.parse(created.next_run as string);
      freezeAt(first);
      const started = await until('the first run', async () => {
        const schedule = await getSchedule(created.id);
        return schedule.last_outcome === 'started' ? schedule : undefined;
      });
      await until('the sync to reach the site', async () => site.requests.length > 0);

      vi.setSystemTime(first + MINUTE);
      const skipped = await until('the skipped tick', async () => {
        const schedule = await getSchedule(created.id);
        return schedule.skipped_runs === 1 ? schedule : undefined;
      });
      expect(skipped).toMatchObject({ last_outcome: 'skipped_running', last_run: started.last_run, last_job_id: started.last_job_id, next_run: new Date(first + 2 * MINUTE).toISOString() });
      const syncs = ((await api('GET', '/api/jobs?limit=100', admin)).json().jobs as Array<{ type: string }>).filter((job) => job.type === 'integration.sync');
      expect(syncs).toHaveLength(1);
    } finally {
      await t.close();
      t = undefined as unknown as TestApp;
      await site.close();
    }
  });

  it('deleting a source deletes its schedules', async () => {
    await start('PRO');
    const gone = await connector();
    const stays = await connector();
    const a = await createSchedule({ source_type: 'connector', source_id: gone, cron: '0 3 * * *' });
    await createSchedule({ source_type: 'connector', source_id: gone, cron: '0 4 * * *' });
    const b = await createSchedule({ source_type: 'connector', source_id: stays, cron: '0 3 * * *' });
    expect((await api('DELETE', `/api/connectors/${gone}`, admin)).statusCode).toBe(204);
    expect((await api('GET', '/api/schedules', admin)).json()).toMatchObject({ total: 1, schedules: [{ id: b.id }] });
    expect((await api('GET', `/api/schedules/${a.id}`, admin)).statusCode).toBe(404);
  });

  it('after a downgrade below PRO schedules are kept, do not fire, and the API says so; they fire again on PRO', async () => {
    await start('PRO');
    const connectorId = await connector();
    const created = await createSchedule({ source_type: 'connector', source_id: connectorId, cron: '0 * * * *' });

    // The PRO licence expires in a year: past it, the box is on FREE.
    const afterExpiry = Date.now() + 400 * 24 * 60 * MINUTE;
    const due = new Cron('0 * * * *', { timezone: 'UTC' }).nextRun(new Date(afterExpiry))!.getTime();
    freezeAt(due + 1_000);
    admin = (await t.login()).access;
    viewer = admin;
    const refused = await api('GET', '/api/schedules', admin);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('tier_required');
    expect(refused.json().error.message).toMatch(/1 saved schedule\(s\) are kept but do not fire/);
    await ticksPass();
    expect(await scanJobs(connectorId)).toHaveLength(0);
    const row = await t.app.db.selectFrom('schedules').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ last_run: null, enabled: 1 });

    await applyLicense(t, 'PRO');
    await until('the kept schedule to fire on PRO', async () => (await scanJobs(connectorId)).length === 1);
  });

  it('two apps sharing one database: with the leader lock one of them fires a tick; SCHEDULER_LEADER_LOCK_ENABLED=false fires in both', async () => {
    for (const lock of ['true', 'false']) {
      const env = { SCHEDULER_LEADER_LOCK_ENABLED: lock };
      await start('PRO', env);
      // Started after the licence is stored: it reads the same PRO entitlement at boot.
      const other = await startApp({ ...ENV, CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}`, ...env }, t.dataDir, false);
      try {
        const connectorId = await connector();
        const created = await createSchedule({ source_type: 'connector', source_id: connectorId, cron: '*/10 * * * *' });
        freezeAt(Date.parse(created.next_run as string) + 1_000);
        // Each app logs every firing it does (a second one at once may find the first's scan still running, and skip).
        const fired = (app: TestApp) => app.logs().split('\n').filter((line) => line.includes('"schedule.fire"') && line.includes(created.id)).length;
        const counts = async () => [fired(t), fired(other)];
        if (lock === 'true') {
          await until('one app to fire', async () => (await counts()).reduce((a, b) => a + b) > 0);
          await ticksPass();
          // Either may lead: moving the shared fake clock ahead expires the first one's lock row too.
          expect((await counts()).sort()).toEqual([0, 1]);
        } else {
          await until('both apps to fire', async () => (await counts()).every((count) => count === 1));
          await ticksPass();
          expect(await counts()).toEqual([1, 1]);
        }
      } finally {
        vi.useRealTimers();
        await other.close();
        await t.close();
      }
    }
    t = undefined as unknown as TestApp;
  }, 90_000);
});
