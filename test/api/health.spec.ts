import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { OpenAIWireServer } from '../fixtures/openai-wire-server.js';
import { startApp, type TestApp } from '../helpers.js';

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

describe('GET /api/health: chat_model of a remote backend is asked whether it answers', () => {
  let wire: OpenAIWireServer;
  let t: TestApp | undefined;
  beforeAll(async () => {
    wire = await OpenAIWireServer.start();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    wire.reset();
  });
  afterAll(() => wire.close());

  const chatModel = async () => {
    const res = await t!.request({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    return { status: res.json().status, component: res.json().components.chat_model, answers: res.json().capabilities.answers, body: res.body };
  };
  const modelRequests = () => wire.requests.filter((request) => request.method === 'GET' && request.url === '/v1/models');

  it('an INFERENCE_URL nothing listens on: unreachable (connection refused), degraded, no address shown', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    t = await startApp({ INFERENCE_URL: `http://127.0.0.1:${port}` });
    const { status, component, answers, body } = await chatModel();
    expect(status).toBe('degraded');
    expect(answers, 'chat answers 502 meanwhile: not extractive').toBe('unavailable');
    expect(component).toMatchObject({ status: 'unreachable', detail: 'The inference server is unreachable (connection refused); chat answers fail until that is fixed' });
    expect(body).not.toContain(String(port));
    expect(t.logs()).toContain('chat model: The inference server is unreachable (connection refused)');
  });

  it('an inference server that answers 401: error, saying it wants credentials', async () => {
    wire.modelsReply = { status: 401 };
    t = await startApp({ INFERENCE_URL: wire.url });
    const { status, component, answers } = await chatModel();
    expect(status).toBe('degraded');
    expect(answers).toBe('unavailable');
    expect(component).toMatchObject({ status: 'error', detail: 'The inference server refused the request (HTTP 401, it expects credentials); chat answers fail until that is fixed' });
  });

  it('an inference server slower than the health budget: unreachable, and health still answers', async () => {
    t = await startApp({ INFERENCE_URL: wire.url });
    wire.modelsReply = { delayMs: 4_000 };
    const { status, component } = await chatModel();
    expect(status).toBe('degraded');
    expect(component).toMatchObject({ status: 'unreachable', detail: 'The inference server did not answer within 1.5 s; chat answers fail until that is fixed' });
  });

  it('a server that answers: ok; the hosted key is sent, and polls close together share one request', async () => {
    t = await startApp({ INFERENCE_URL: wire.url });
    expect((await chatModel()).component).toMatchObject({ status: 'ok', detail: 'served-model (inference-server, remote)' });
    await t.close();

    wire.reset();
    t = await startApp(wire.hostedEnv('sk-health-probe-key', 'test-model'));
    const polls = await Promise.all([chatModel(), chatModel(), chatModel()]);
    for (const poll of polls) expect(poll.component).toMatchObject({ status: 'ok', detail: 'test-model (hosted, remote)' });
    expect(modelRequests()).toHaveLength(1);
    expect(modelRequests()[0].headers.authorization).toBe('Bearer sk-health-probe-key');
  });

  it('a hosted API that rejects the key: error, and the key is not shown', async () => {
    wire.modelsReply = { status: 401 };
    t = await startApp(wire.hostedEnv('sk-rejected-key', 'test-model'));
    const { component, body } = await chatModel();
    expect(component).toMatchObject({ status: 'error', detail: 'The hosted model rejected the API key (HTTP 401); chat answers fail until that is fixed' });
    expect(body).not.toContain('sk-rejected-key');
  });
});
