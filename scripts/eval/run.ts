/**
 * Retrieval evaluation on a real collection (issue 16): the corpus of scripts/eval/corpus.ts indexed by the
 * built service (dist/server.js) on a fresh DATA_DIR of a PRO box, through a connector scan as users do, with
 * the built-in embedder; then every question through `POST /api/search` in each mode and `POST /api/chat`.
 * Prints recall@5, MRR@10 and nDCG@10 per mode, set and kind, and the share of extractive answers that quote
 * the answer span. `npm run eval`; variables: docs/evaluation.md.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BENCH_SECRETS, DEPLOYED_ENV, ROOT, login, startService, stopService, type Service } from '../../bench/harness.js';
import { generateLicenseKeyPair, issueLicense } from '../../plugins/license/license-key.js';
import { INTRODUCES } from '../../plugins/chat/extractive.js';
import { NO_MODEL } from '../../plugins/search-index/corpus-adaptation/index.js';
import { buildCorpus, listFolder } from './corpus.js';
import { containsSpan, mean, ndcgAt10, recallAt5, reciprocalRankAt10, table } from './metrics.js';
import { type EvalQuestion, readQuestions, rightDocuments } from './questions.js';
import { referenceRankings, type ReferenceRankings } from './reference.js';

const MODES = ['hybrid', 'keyword', 'vector'] as const;
type Mode = (typeof MODES)[number];
const POLL_MS = 500;
const DAY = 86_400_000;

interface Options {
  questionsFile: string;
  nodeModules: string;
  /** A prebuilt corpus folder (HEARTH_EVAL_CORPUS_DIR, e.g. scripts/eval/man-corpus.ts's), scanned in place; null: node_modules' markdown. */
  corpusDir: string | null;
  server: string;
  /** Kept between runs when given (corpus/ and data/ inside): a second run rescans, which skips unchanged files. */
  workDir: string | null;
  /** MODEL_DIR of the service: by default inside the data dir (the built-in embedder is built there, minutes); another run's may be reused. */
  modelDir: string | null;
  modes: Mode[];
  chat: boolean;
  /** Issue 16's reference pipelines over the same corpus and questions, outside Hearth (scripts/eval/reference.ts): every run's own baseline. */
  reference: boolean;
  out: string | null;
}

function options(env = process.env): Options {
  const evalDir = env.HEARTH_EVAL_DIR;
  const questionsFile = env.HEARTH_EVAL_QUESTIONS ?? (evalDir ? path.join(evalDir, 'questions.jsonl') : null);
  if (!questionsFile) throw new Error('Set HEARTH_EVAL_DIR (a folder holding questions.jsonl) or HEARTH_EVAL_QUESTIONS (the file): see docs/evaluation.md');
  const modes = (env.HEARTH_EVAL_MODES ?? MODES.join(',')).split(',').map((mode) => mode.trim()).filter(Boolean) as Mode[];
  if (modes.some((mode) => !MODES.includes(mode))) throw new Error(`HEARTH_EVAL_MODES: a comma-separated list of ${MODES.join(', ')}`);
  return {
    questionsFile: path.resolve(questionsFile),
    nodeModules: path.resolve(env.HEARTH_EVAL_NODE_MODULES ?? path.join(ROOT, 'node_modules')),
    corpusDir: env.HEARTH_EVAL_CORPUS_DIR ? path.resolve(env.HEARTH_EVAL_CORPUS_DIR) : null,
    server: path.resolve(env.HEARTH_EVAL_SERVER ?? path.join(ROOT, 'dist', 'server.js')),
    workDir: env.HEARTH_EVAL_WORK ? path.resolve(env.HEARTH_EVAL_WORK) : null,
    modelDir: env.HEARTH_EVAL_MODEL_DIR ? path.resolve(env.HEARTH_EVAL_MODEL_DIR) : null,
    modes,
    chat: env.HEARTH_EVAL_CHAT !== '0',
    reference: env.HEARTH_EVAL_REFERENCE !== '0',
    out: env.HEARTH_EVAL_OUT ? path.resolve(env.HEARTH_EVAL_OUT) : null,
  };
}

/** A logged-in JSON client of the service. */
class Client {
  private token = '';
  constructor(readonly url: string) {}

  async login(): Promise<void> {
    this.token = await login(this.url);
  }

  async json<T>(method: string, route: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

async function until<T>(what: string, service: Service, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (service.child.exitCode !== null || service.child.signalCode !== null) throw new Error(`the service exited while waiting for ${what}:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** A PRO licence (the corpus is over the FREE plan's document count), and the built-in embedder in force. */
async function prepareBox(client: Client, service: Service, privateKeyPem: string): Promise<void> {
  const licence = issueLicense(privateKeyPem, { id: 'eval', licensee: 'Hearth eval', tier: 'PRO', issued_at: new Date(Date.now() - DAY).toISOString(), expires_at: new Date(Date.now() + 30 * DAY).toISOString() });
  await client.json('POST', '/api/license', { license_key: licence });
  await until('the built-in embedder', service, async () => {
    const health = await client.json<{ components: Record<string, { status: string }> }>('GET', '/api/health');
    return health.components.embedder?.status === 'ok' ? true : undefined;
  }, 30 * 60_000);
}

/**
 * Waits for the embedder's adaptation to the collection (EMBED_ADAPT) and the vector index's rebuild after it, so
 * that the questions meet the index a box settles into; a collection outside EMBED_ADAPT_MIN/MAX_CHUNKS or EMBED_ADAPT=off
 * goes on at once.
 */
async function adapted(client: Client, service: Service): Promise<void> {
  const started = Date.now();
  type Stats = { chunks: number; model_id: string | null; stale_chunks: number; corpus_adaptation: { state: string; detail: string } };
  const settled = await until('the embedder adapted to the collection', service, async () => {
    const stats = await client.json<Stats>('GET', '/api/index/stats');
    const { state, detail } = stats.corpus_adaptation;
    // Outside the limits: only as found by a check of the collection as it is now (a check at boot found 0 chunks).
    if ((state === 'off' && detail !== NO_MODEL) || state === 'failed' || (state === 'waiting' && /EMBED_ADAPT_M(IN|AX)_CHUNKS/.test(detail) && detail.startsWith(`${stats.chunks} chunks`))) return stats;
    const adaptedId = detail.split(',')[0];
    return state === 'in_force' && stats.model_id?.startsWith(`${adaptedId}@`) && stats.stale_chunks === 0 ? stats : undefined;
  }, 60 * 60_000);
  console.log(`embedder: ${settled.model_id} (adaptation ${settled.corpus_adaptation.state}: ${settled.corpus_adaptation.detail}; ${Math.round((Date.now() - started) / 1000)} s)`);
}

/** Scans the corpus folder through a connector and waits for the scan job; returns document id → corpus id. */
async function indexCorpus(client: Client, service: Service, corpusDir: string, include: string[]): Promise<Map<string, string>> {
  const { connectors } = await client.json<{ connectors: Array<{ id: string; name: string }> }>('GET', '/api/connectors');
  const connector = connectors.find((c) => c.name === 'eval-corpus') ?? (await client.json<{ id: string }>('POST', '/api/connectors', { name: 'eval-corpus', path: corpusDir, include }));
  const started = Date.now();
  const job = await client.json<{ id: string }>('POST', `/api/connectors/${connector.id}/scan`);
  const done = await until('the scan job', service, async () => {
    const view = await client.json<{ state: string; error?: string; result?: unknown }>('GET', `/api/jobs/${job.id}`);
    return ['succeeded', 'failed', 'cancelled'].includes(view.state) ? view : undefined;
  }, 3 * 3_600_000);
  if (done.state !== 'succeeded') throw new Error(`the scan ${done.state}: ${done.error ?? ''}`);
  console.log(`scan: ${Math.round((Date.now() - started) / 1000)} s, ${JSON.stringify(done.result ?? {})}`);
  const ids = new Map<string, string>();
  for (let offset = 0; ; offset += 500) {
    const page = await client.json<{ documents: Array<{ id: string; source_path: string | null; status: string }>; total: number }>('GET', `/api/docs?limit=500&offset=${offset}`);
    for (const doc of page.documents) if (doc.source_path) ids.set(doc.id, path.relative(corpusDir, doc.source_path).split(path.sep).join('/'));
    if (offset + 500 >= page.total) break;
  }
  return ids;
}

interface Answered {
  question: EvalQuestion;
  ranked: Partial<Record<Mode, string[]>>;
  answer?: { text: string; quotesSpan: boolean; sourcesQuoteSpan: boolean; quoteEndsIntroducing: boolean };
}

async function ask(client: Client, questions: EvalQuestion[], docIds: Map<string, string>, run: Options): Promise<Answered[]> {
  const answered: Answered[] = [];
  for (const question of questions) {
    const item: Answered = { question, ranked: {} };
    for (const mode of run.modes) {
      const { results } = await client.json<{ results: Array<{ document_id: string }> }>('POST', '/api/search', { query: question.question, k: 10, mode });
      item.ranked[mode] = results.map((result) => docIds.get(result.document_id) ?? result.document_id);
    }
    if (run.chat) {
      const chat = await client.json<{ answer: string; sources: Array<{ text: string }> }>('POST', '/api/chat', { query: question.question });
      item.answer = {
        text: chat.answer,
        quotesSpan: containsSpan(chat.answer, question.answer),
        sourcesQuoteSpan: chat.sources.some((source) => containsSpan(source.text, question.answer)),
        quoteEndsIntroducing: [...chat.answer.matchAll(EXTRACTIVE_QUOTE)].some(([, quote]) => INTRODUCES.test(quote)),
      };
    }
    answered.push(item);
  }
  return answered;
}

/** A quote of an extractive answer (`[n] place:` then the quote in double quotes, as extractiveAnswer writes it). */
const EXTRACTIVE_QUOTE = /\n\n\[\d+\] [^\n]*:\n"([^]*?)"(?=\n\n\[|$)/g;

/** The question groups every figure is reported for. */
const GROUPS: Array<{ name: string; keep: (q: EvalQuestion) => boolean }> = [
  { name: 'all', keep: () => true },
  ...(['dev', 'test'] as const).flatMap((set) => [
    { name: `${set}`, keep: (q: EvalQuestion) => q.set === set },
    { name: `${set} same`, keep: (q: EvalQuestion) => q.set === set && q.kind === 'same' },
    { name: `${set} paraphrased`, keep: (q: EvalQuestion) => q.set === set && q.kind === 'paraphrased' },
  ]),
];

function report(answered: Answered[], run: Options): string {
  const lines: string[] = [];
  const overlapRows = (['same', 'paraphrased'] as const).map((kind) => {
    const of = answered.filter((a) => a.question.kind === kind);
    return [kind, String(of.length), mean(of.flatMap((a) => (a.question.overlap === undefined ? [] : [a.question.overlap])))];
  });
  lines.push(table(['kind', 'questions', 'mean overlap'], overlapRows), '');
  const rows: Array<Array<string | number>> = [];
  for (const group of GROUPS) {
    const of = answered.filter((a) => group.keep(a.question));
    for (const mode of run.modes) {
      const scores = of.map((a) => ({ ranked: a.ranked[mode]!, right: rightDocuments(a.question) }));
      rows.push([group.name, mode, String(of.length), mean(scores.map((s) => recallAt5(s.ranked, s.right))), mean(scores.map((s) => reciprocalRankAt10(s.ranked, s.right))), mean(scores.map((s) => ndcgAt10(s.ranked, s.right)))]);
    }
  }
  lines.push(table(['set', 'mode', 'n', 'recall@5', 'MRR@10', 'nDCG@10'], rows));
  if (run.chat) {
    const chatRows = GROUPS.map((group) => {
      const of = answered.filter((a) => group.keep(a.question) && a.answer);
      const share = (test: (answer: NonNullable<Answered['answer']>) => boolean) => mean(of.map((a) => Number(test(a.answer!))));
      return [group.name, String(of.length), share((a) => a.quotesSpan), share((a) => a.sourcesQuoteSpan), share((a) => a.quoteEndsIntroducing), mean(of.map((a) => a.answer!.text.split(/\s+/).length))];
    });
    lines.push('', table(['set', 'n', 'answer quotes span', 'sources hold span', 'a quote ends introducing', 'answer words'], chatRows));
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const run = options();
  const questions = await readQuestions(run.questionsFile);
  const work = run.workDir ?? (await mkdtemp(path.join(os.tmpdir(), 'hearth-eval-')));
  const corpusDir = run.corpusDir ?? path.join(work, 'corpus');
  const dataDir = path.join(work, 'data');
  await mkdir(dataDir, { recursive: true });
  const corpus = run.corpusDir ? await listFolder(run.corpusDir) : await buildCorpus(run.nodeModules, corpusDir);
  const include = [...new Set(corpus.map((document) => path.extname(document.id)))];
  const known = new Set(corpus.map((document) => document.id));
  const usable = questions.filter((q) => known.has(q.doc));
  console.log(`corpus: ${corpus.length} documents; questions: ${usable.length} of ${questions.length} (${questions.length - usable.length} name a document outside the corpus)`);

  const signer = generateLicenseKeyPair();
  const realCorpus = await realpath(corpusDir);
  const env = {
    ...DEPLOYED_ENV,
    ...BENCH_SECRETS,
    DATA_DIR: dataDir,
    ...(run.modelDir ? { MODEL_DIR: run.modelDir } : {}),
    LICENSE_PUBLIC_KEYS: signer.publicKeyBase64,
    CONNECTOR_ALLOWED_PATHS: `/app/docs:${realCorpus}`,
    LOG_LEVEL: 'ERROR',
    ACCESS_TOKEN_EXPIRE_SECONDS: '86400',
    // SEARCH_SOFT_MATCH_CHUNKS and CHAT_SOFT_MATCH_CHUNKS pass through startService (else the service's defaults: search off, the chat on).
  };
  const service = await startService(run.server, env, { name: 'the service under evaluation', timeoutMs: 300_000, killOnTimeout: true });
  try {
    const client = new Client(service.url);
    await client.login();
    await prepareBox(client, service, signer.privateKeyPem);
    const docIds = await indexCorpus(client, service, realCorpus, include);
    console.log(`indexed: ${docIds.size} documents`);
    await adapted(client, service);
    const answered = await ask(client, usable, docIds, run);
    console.log(report(answered, run));
    if (run.out) await writeFile(run.out, JSON.stringify(answered, null, 1));
    await stopService(service);
    // The service's own model (installed into its MODEL_DIR at first start) embeds the reference's chunks.
    if (run.reference) console.log('\n' + referenceReport(answered, await referenceRankings(realCorpus, usable, run.modelDir ?? path.join(dataDir, 'models'))));
  } finally {
    await stopService(service);
    if (!run.workDir) await rm(work, { recursive: true, force: true });
  }
}

/**
 * Recall@5 of each reference pipeline per half (all questions / paraphrased), then the service's hybrid search and its
 * margin over the best pipeline of each column.
 */
function referenceReport(answered: Answered[], reference: ReferenceRankings): string {
  const columns = ['dev', 'test'].flatMap((set) => [
    { name: `${set}`, keep: (q: EvalQuestion) => q.set === set },
    { name: `${set} paraphrased`, keep: (q: EvalQuestion) => q.set === set && q.kind === 'paraphrased' },
  ]);
  const recall = (ranking: (a: Answered) => string[]) => columns.map(({ keep }) => mean(answered.filter((a) => keep(a.question)).map((a) => recallAt5(ranking(a), rightDocuments(a.question)))));
  const rows: Array<Array<string | number>> = reference.pipelines.map((name) => [name, ...recall((a) => reference.ranked.get(a.question.id)![name])]);
  const best = columns.map((_, column) => Math.max(...rows.map((row) => row[column + 1] as number)));
  const hybrid = recall((a) => a.ranked.hybrid ?? []);
  rows.push(['Hearth hybrid (POST /api/search)', ...hybrid], ['hybrid − best reference', ...hybrid.map((value, column) => value - best[column])]);
  return `Issue 16's reference pipelines over the same corpus, outside Hearth (scripts/eval/reference.ts), recall@5:\n${table(['pipeline', ...columns.map((c) => c.name)], rows)}`;
}

await main();
