import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { startApp, type TestApp } from './helpers.js';

describe('GET /api/health', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startApp();
  });
  afterEach(() => t.close());

  const health = () => t.request({ method: 'GET', url: '/api/health' });

  it('reports real readiness to an anonymous caller: degraded while no models are installed', async () => {
    const res = await health();
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toMatchObject({
      status: 'degraded',
      version: pkg.version,
      components: {
        database: { status: 'ok' },
        vector_index: { status: 'not_installed' },
        embedder: { status: 'not_installed', detail: 'no embedding model installed: search runs on keywords only' },
        chat_model: { status: 'not_installed', detail: 'no chat model installed: answers are extractive' },
      },
      capabilities: { search: 'keyword', answers: 'extractive' },
    });
    expect(Number.isInteger(body.uptime_seconds) && body.uptime_seconds >= 0).toBe(true);
    for (const component of Object.values(body.components) as { latency_ms: number }[]) expect(component.latency_ms).toBeGreaterThanOrEqual(0);
    expect(body.components.database.detail).toBeUndefined();
  });

  it('never shows a filesystem path (the route is public)', async () => {
    const body = (await health()).body;
    expect(body).not.toContain(t.dataDir);
    expect(body).not.toContain(t.app.config.modelDir);
    expect(body).not.toMatch(/\/(tmp|var|home|app|data)\//);
  });

  it('is ok, hybrid and generative once features register working probes', async () => {
    for (const component of ['vector_index', 'embedder', 'chat_model']) t.app.health.register(component, async () => ({ status: 'ok' }));
    const res = await health();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', capabilities: { search: 'hybrid', answers: 'generative' } });
  });

  it('needs both the embedder and the vector index for hybrid search', async () => {
    t.app.health.register('embedder', async () => ({ status: 'ok' }));
    expect((await health()).json().capabilities).toEqual({ search: 'keyword', answers: 'extractive' });
  });

  it('reports a failing probe as error with a generic detail, degraded, and logs the cause', async () => {
    t.app.health.register('embedder', async () => {
      throw new Error('cannot open /srv/models/secret-model.onnx');
    });
    const res = await health();
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('degraded');
    expect(res.json().components.embedder).toMatchObject({ status: 'error', detail: 'embedder check failed' });
    expect(res.body).not.toContain('/srv/models');
    expect(t.logs()).toContain('health probe failed');
  });

  it('does not hang on a probe that never answers', async () => {
    t.app.health.register('chat_model', () => new Promise(() => {}));
    const res = await health();
    expect(res.json().components.chat_model).toMatchObject({ status: 'error', detail: 'chat model check failed' });
  });

  it('lists a component a later feature adds under a new name', async () => {
    t.app.health.register('ocr', async () => ({ status: 'not_installed', detail: 'no OCR languages installed' }));
    expect((await health()).json().components.ocr).toMatchObject({ status: 'not_installed', detail: 'no OCR languages installed' });
  });

  it('answers 503 with status error when the database fails', async () => {
    await t.app.db.destroy();
    const res = await health();
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'error', components: { database: { status: 'error', detail: 'database check failed' } } });
  });
});
