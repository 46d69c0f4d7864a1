/**
 * GET /api/analytics/{source_id}/* latency (app.inject: routing, auth, tier gate, validation and
 * serialisation included) for a source of 100k chunks (1,000 documents of 100 chunks), with four
 * metadata rules over two fields: a chunk-level field of two competing rules (half the chunks match
 * themselves, the rest inherit, a tenth are contested) and a document-level field. Rows are written
 * straight into SQLite as ingestion would leave them. One document in ten is allowed to a group the
 * bench's reader is not in, so every count runs through the access filter (issue 18) and leaves them out.
 * Target (issue 17): p95 <= 200 ms per endpoint.
 * Alone: `npx tsx bench/analytics.ts`; BENCH_ANALYTICS_CHUNKS (default 100000), BENCH_ANALYTICS_RUNS (default 30).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../core/app.js';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD, loadConfig } from '../core/config.js';
import type { Db } from '../core/db/database.js';
import { generateLicenseKeyPair, issueLicense } from '../plugins/license/license-key.js';
import { insertDocuments, type SeedDocument } from '../test/fixtures/search-data.js';

const ENDPOINTS = ['chunk-size-distribution', 'metadata-hit-rate', 'metadata-coverage', 'chunks-per-document', 'inheritance-ratio', 'empty-metadata', 'rule-priority-audit'];
const CHUNKS_PER_DOCUMENT = 100;
export const ANALYTICS_TARGET_P95_MS = 200;

export interface AnalyticsBenchResult {
  chunks: number;
  rows: Array<{ endpoint: string; p50: number; p95: number; runs: number }>;
  seedSeconds: number;
  loadavg: number[];
}

const percentile = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
const round = (ms: number) => Math.round(ms * 10) / 10;

function documents(count: number): SeedDocument[] {
  return Array.from({ length: count }, (_, d) => ({
    id: `bench-doc-${d}`,
    filename: `team${d % 7}-report-${d}.txt`,
    groups: d % 10 === 9 ? ['bench-restricted'] : ['everyone'],
    chunks: Array.from({ length: CHUNKS_PER_DOCUMENT }, (_, c) => ({ text: `Document ${d} chunk ${c}. ${'lorem ipsum '.repeat(10 + ((d * 31 + c * 17) % 90))}` })),
  }));
}

/** Rules and the rows ingestion would have written for them. */
async function seedMetadata(db: Db, chunks: Array<{ rowid: number; document_id: string; ordinal: number }>): Promise<void> {
  const now = Date.now();
  const rule = (field: string, level: 'document' | 'chunk', priority: number) =>
    ({ id: randomUUID(), source_type: 'upload' as const, source_id: 'uploads', field_name: field, pattern: '(x)', query_pattern: null, scope: 'full' as const, level, chunk_boundary: 0, priority, created_at: now, updated_at: now });
  const [sectionHigh, sectionLow, team, teamLow] = [rule('section', 'chunk', 1), rule('section', 'chunk', 0), rule('team', 'document', 0), rule('team', 'document', -1)];
  await db.insertInto('metadata_rules').values([sectionHigh, sectionLow, team, teamLow]).execute();
  const values: Array<{ chunk_rowid: number; document_id: string; field_name: string; value: string; origin: 'self' | 'inherited' | 'document'; rule_id: string; contenders: number }> = [];
  const hits: Array<{ rule_id: string; chunk_rowid: number; document_id: string }> = [];
  for (const chunk of chunks) {
    const own = chunk.ordinal % 2 === 0;
    const contested = chunk.ordinal % 10 === 0;
    if (chunk.ordinal > 0 || own) values.push({ chunk_rowid: chunk.rowid, document_id: chunk.document_id, field_name: 'section', value: String(Math.floor(chunk.ordinal / 2)), origin: own ? 'self' : 'inherited', rule_id: contested && chunk.ordinal % 20 === 0 ? sectionLow.id : sectionHigh.id, contenders: own ? (contested ? 2 : 1) : 0 });
    if (own) hits.push({ rule_id: sectionHigh.id, chunk_rowid: chunk.rowid, document_id: chunk.document_id });
    if (contested) hits.push({ rule_id: sectionLow.id, chunk_rowid: chunk.rowid, document_id: chunk.document_id });
    if (!chunk.document_id.endsWith('3')) {
      values.push({ chunk_rowid: chunk.rowid, document_id: chunk.document_id, field_name: 'team', value: chunk.document_id.slice(-1), origin: 'document', rule_id: team.id, contenders: 2 });
      hits.push({ rule_id: team.id, chunk_rowid: chunk.rowid, document_id: chunk.document_id }, { rule_id: teamLow.id, chunk_rowid: chunk.rowid, document_id: chunk.document_id });
    }
  }
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < values.length; i += 500) await trx.insertInto('chunk_metadata').values(values.slice(i, i + 500)).execute();
    for (let i = 0; i < hits.length; i += 500) await trx.insertInto('chunk_rule_hits').values(hits.slice(i, i + 500)).execute();
  });
}

async function licensedApp(dataDir: string): Promise<{ app: FastifyInstance; token: string }> {
  const signer = generateLicenseKeyPair();
  const config = loadConfig({
    JWT_SECRET_KEY: 'bench-secret-that-is-long-enough-for-hs256', MFA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    DATA_DIR: dataDir, LOG_LEVEL: 'ERROR', HEARTH_DEFAULT_EMBEDDER: 'off', LICENSE_PUBLIC_KEYS: signer.publicKeyBase64,
  }, { secretDirs: [] });
  const app = await buildApp({ config });
  await app.ready();
  const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD } });
  const token = login.json().access_token as string;
  const day = 86_400_000;
  const licence = issueLicense(signer.privateKeyPem, { id: 'bench', licensee: 'Hearth bench', tier: 'PRO', issued_at: new Date(Date.now() - day).toISOString(), expires_at: new Date(Date.now() + day).toISOString() });
  const applied = await app.inject({ method: 'POST', url: '/api/license', headers: { authorization: `Bearer ${token}` }, payload: { license_key: licence } });
  if (applied.statusCode !== 200) throw new Error(`licence refused: ${applied.body}`);
  return { app, token };
}

export async function benchAnalytics(chunks: number, runs: number): Promise<AnalyticsBenchResult> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-analytics-'));
  const { app, token } = await licensedApp(dataDir);
  try {
    const started = performance.now();
    const seeded = await insertDocuments(app.db, documents(Math.ceil(chunks / CHUNKS_PER_DOCUMENT)));
    const rows = await app.db.selectFrom('chunks').select(['rowid', 'document_id', 'ordinal']).orderBy('rowid').execute();
    await seedMetadata(app.db, rows);
    const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
    const result: AnalyticsBenchResult = { chunks: seeded.length, rows: [], seedSeconds, loadavg: os.loadavg() };
    for (const endpoint of ENDPOINTS) {
      const times: number[] = [];
      for (let i = 0; i < runs + 3; i++) {
        const t0 = performance.now();
        const res = await app.inject({ method: 'GET', url: `/api/analytics/uploads/${endpoint}`, headers: { authorization: `Bearer ${token}` } });
        if (res.statusCode !== 200) throw new Error(`${endpoint}: ${res.statusCode} ${res.body}`);
        if (i >= 3) times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      result.rows.push({ endpoint, p50: round(percentile(times, 0.5)), p95: round(percentile(times, 0.95)), runs });
    }
    return result;
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function formatAnalyticsBench(result: AnalyticsBenchResult): string {
  const lines = result.rows.map((row) => `  ${row.endpoint.padEnd(24)} p50 ${String(row.p50).padStart(6)} ms   p95 ${String(row.p95).padStart(6)} ms   ${row.p95 <= ANALYTICS_TARGET_P95_MS ? 'ok' : 'FAIL'}`);
  return [`analytics at ${result.chunks} chunks (seeded in ${result.seedSeconds} s), target p95 <= ${ANALYTICS_TARGET_P95_MS} ms:`, ...lines].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const chunks = Number(process.env.BENCH_ANALYTICS_CHUNKS ?? 100_000);
  const runs = Number(process.env.BENCH_ANALYTICS_RUNS ?? 30);
  benchAnalytics(chunks, runs).then((result) => console.log(formatAnalyticsBench(result)), (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
