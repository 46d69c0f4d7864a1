import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JobFailure } from '../../core/jobs/runner.js';
import { startApp, type TestApp } from '../helpers.js';

let t: TestApp;
let viewer: string;
let editor: string;
beforeEach(async () => {
  t = await startApp({ JOB_STATE_TTL_SECONDS: '60' });
  viewer = (await t.userWithRole('viewer')).access;
  editor = (await t.userWithRole('editor')).access;
});
afterEach(async () => {
  vi.useRealTimers();
  await t.close();
});

const getJob = (id: string) => t.request({ method: 'GET', url: `/api/jobs/${id}`, token: viewer });

describe('jobs', () => {
  it('run in order and report progress, success and failure', async () => {
    const ok = await t.app.jobs.enqueue('test.ok', async (ctx) => {
      for (let i = 1; i <= 3; i++) await ctx.progress(i, 3, `item ${i}`);
    });
    const bad = await t.app.jobs.enqueue('test.bad', async () => {
      throw new JobFailure('the file is encrypted');
    });
    const crash = await t.app.jobs.enqueue('test.crash', async () => {
      throw new Error('ENOENT /var/lib/secret/path');
    });
    await t.app.jobs.idle();

    const done = (await getJob(ok.id)).json();
    expect(done).toMatchObject({ id: ok.id, type: 'test.ok', state: 'succeeded', progress: { done: 3, total: 3, current: 'item 3' } });
    expect(Date.parse(done.finished_at)).toBeGreaterThanOrEqual(Date.parse(done.started_at));
    expect((await getJob(bad.id)).json()).toMatchObject({ state: 'failed', error: 'the file is encrypted' });
    const crashed = (await getJob(crash.id)).json();
    expect(crashed.state).toBe('failed');
    expect(crashed.error).not.toContain('/var/lib');

    const list = await t.request({ method: 'GET', url: '/api/jobs?state=failed', token: viewer });
    expect(list.json().total).toBe(2);
    expect(new Set(list.json().jobs.map((j: { id: string }) => j.id))).toEqual(new Set([crash.id, bad.id]));
  });

  it('cancel stops work between items and leaves what was done', async () => {
    const processed: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const job = await t.app.jobs.enqueue('test.long', async (ctx) => {
      for (let i = 0; i < 5; i++) {
        ctx.checkpoint();
        processed.push(i);
        if (i === 1) await gate;
      }
    });
    const queued = await t.app.jobs.enqueue('test.queued', async () => {
      processed.push(99);
    });
    await vi.waitFor(() => expect(processed).toEqual([0, 1]));

    expect((await t.request({ method: 'POST', url: `/api/jobs/${job.id}/cancel`, token: viewer })).statusCode).toBe(403);
    const cancelled = await t.request({ method: 'POST', url: `/api/jobs/${job.id}/cancel`, token: editor });
    expect(cancelled.statusCode).toBe(202);
    const cancelledQueued = await t.request({ method: 'POST', url: `/api/jobs/${queued.id}/cancel`, token: editor });
    expect(cancelledQueued.statusCode).toBe(202);
    release();
    await t.app.jobs.idle();

    expect(processed).toEqual([0, 1]);
    expect((await getJob(job.id)).json().state).toBe('cancelled');
    expect((await getJob(queued.id)).json().state).toBe('cancelled');
    const again = await t.request({ method: 'POST', url: `/api/jobs/${job.id}/cancel`, token: editor });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('job_finished');
  });

  it('terminal snapshots expire after JOB_STATE_TTL_SECONDS; in-flight ones do not', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const finished = await t.app.jobs.enqueue('test.quick', async () => undefined);
    await t.app.jobs.idle();
    const running = await t.app.jobs.enqueue('test.slow', async () => gate);
    vi.setSystemTime(Date.now() + 61_000);
    expect((await getJob(finished.id)).statusCode).toBe(404);
    expect((await getJob(running.id)).json().state).toBe('running');
    release();
    await t.app.jobs.idle();
  });

  it('validates input and refuses anonymous callers', async () => {
    expect((await t.request({ method: 'GET', url: '/api/jobs?state=bogus', token: viewer })).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/jobs?limit=0', token: viewer })).statusCode).toBe(400);
    expect((await getJob('nope')).statusCode).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/jobs/nope/cancel', token: editor })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/jobs' })).statusCode).toBe(401);
  });
});
