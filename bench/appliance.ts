/**
 * The appliance's figures on this box (docs/appliance.md): idle and peak RSS, ingest and search, and chat
 * latency with the local GGUF (stories260K), under the settings the hardware profile picks here against the
 * defaults before profiles (N_THREADS=8). Each variant: `node dist/server.js` as deployed (bench/harness.ts),
 * a fresh DATA_DIR, one MODEL_DIR holding the default embedder (built once) and stories260K.
 *
 *   npx tsup && npx tsx bench/appliance.ts      BENCH_APPLIANCE_DOCS (12), BENCH_APPLIANCE_QUERIES (20), BENCH_APPLIANCE_CHATS (3)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prose } from '../test/fixtures/documents.js';
import { multipartBody } from '../test/fixtures/multipart.js';
import { STORIES_GGUF } from '../test/fixtures/models.js';
import { BENCH_SECRETS, DEPLOYED_ENV, login, procStatus, ROOT, startService, stats, stopService } from './harness.js';

const DOCS = Number(process.env.BENCH_APPLIANCE_DOCS ?? 12);
const QUERIES = Number(process.env.BENCH_APPLIANCE_QUERIES ?? 20);
const CHATS = Number(process.env.BENCH_APPLIANCE_CHATS ?? 3);
const VARIANTS: Record<string, Record<string, string>> = {
  'profile defaults': {},
  'before profiles (N_THREADS=8)': { N_THREADS: '8', INDEX_EXTRACTION_WORKERS: String(Math.max(1, os.availableParallelism() - 1)), HEARTH_HARDWARE_PROFILE: 'generic' },
};

const work = mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-appliance-'));
const modelDir = path.join(work, 'models');
const cli = (...args: string[]) => {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), 'models', ...args], { env: { ...process.env, MODEL_DIR: modelDir }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`hearth models ${args.join(' ')}: ${result.stderr}`);
};
cli('build-default');
cli('import-llm', STORIES_GGUF);

const mib = (kb: number | undefined) => (kb === undefined ? null : Math.round(kb / 1024));

async function post(url: string, token: string, route: string, body: unknown): Promise<any> {
  const res = await fetch(`${url}${route}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** On a box this busy the GGUF can take longer to load than fastify's plugin timeout (10 s): start again. */
async function startWithRetries(env: Record<string, string>) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startService(path.join(ROOT, 'dist', 'server.js'), env, { timeoutMs: 120_000 });
    } catch (error) {
      if (attempt === 3) throw error;
      console.error(`start ${attempt} failed: ${(error as Error).message.split('\n').at(-1)}`);
    }
  }
}

async function variant(name: string, env: Record<string, string>) {
  const dataDir = path.join(work, name.replace(/\W+/g, '-'));
  const service = await startWithRetries({ ...DEPLOYED_ENV, ...BENCH_SECRETS, DATA_DIR: dataDir, MODEL_DIR: modelDir, LOG_LEVEL: 'WARNING', N_CTX: '2048', INFERENCE_TIMEOUT_SECONDS: '60', ...env });
  try {
    const token = await login(service.url);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idle = mib(procStatus(service.child.pid)?.VmRSS);

    const started = performance.now();
    for (let i = 0; i < DOCS; i++) {
      const text = Array.from({ length: 60 }, (_, p) => prose(i * 1000 + p, 12)).join('\n\n');
      const { payload, headers } = multipartBody([{ name: 'file', content: Buffer.from(text), filename: `doc-${i}.txt` }]);
      const res = await fetch(`${service.url}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body: payload });
      if (res.status !== 202) throw new Error(`upload ${res.status}`);
    }
    let chunks = 0;
    for (;;) {
      const res = await fetch(`${service.url}/api/docs?limit=500`, { headers: { authorization: `Bearer ${token}` } });
      const { documents } = (await res.json()) as { documents: Array<{ status: string; chunk_count: number }> };
      if (documents.length === DOCS && documents.every((d) => d.status === 'indexed' || d.status === 'failed')) {
        chunks = documents.reduce((sum, d) => sum + d.chunk_count, 0);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ingestSeconds = (performance.now() - started) / 1000;

    const search: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const t0 = performance.now();
      await post(service.url, token, '/api/search', { query: prose(7000 + i, 1), mode: 'hybrid', k: 5 });
      search.push(performance.now() - t0);
    }
    const chat: number[] = [];
    const chatFailures: string[] = [];
    for (let i = 0; i < CHATS; i++) {
      const t0 = performance.now();
      try {
        const answer = await post(service.url, token, '/api/chat', { query: `What does the text say about ${prose(9000 + i, 1).split(' ').slice(0, 6).join(' ')}?` });
        if (answer.mode === 'generative') chat.push(performance.now() - t0);
        else chatFailures.push(`answered ${answer.mode}`);
      } catch (error) {
        chatFailures.push((error as Error).message.slice(0, 120)); // an inference timeout is a figure too
      }
    }
    const hardware = await (await fetch(`${service.url}/api/hardware`, { headers: { authorization: `Bearer ${token}` } })).json() as { profile: unknown };
    return {
      variant: name,
      profile: hardware.profile,
      idle_rss_mib: idle,
      peak_rss_mib: mib(procStatus(service.child.pid)?.VmHWM),
      ingest: { documents: DOCS, chunks, seconds: Number(ingestSeconds.toFixed(1)), chunks_per_s: Number((chunks / ingestSeconds).toFixed(1)) },
      search_hybrid_ms: { median: Number(stats(search).p50.toFixed(1)), p95: Number(stats(search).p95.toFixed(1)) },
      chat_ms: { median: chat.length ? Math.round(stats(chat).p50) : null, runs: chat.map(Math.round), failures: chatFailures },
    };
  } finally {
    await stopService(service);
  }
}

try {
  for (const [name, env] of Object.entries(VARIANTS)) console.log(JSON.stringify(await variant(name, env)));
} finally {
  rmSync(work, { recursive: true, force: true });
}
