/**
 * Chat latency: what the service adds before the first token, against node-llama-cpp called
 * directly with the same prompt in the same run (issue target: under 50 ms).
 *
 *   1. direct   node-llama-cpp in this process (the version the service uses, the same GGUF, context
 *               size and threads, the same chat wrapper as native/llm/local-generator.ts), a fixed
 *               chat-shaped prompt (system + numbered sources + question, fitted to the window as the
 *               service fits it), the sequence cleared before each run so that the whole prompt is
 *               evaluated: time to first token, prompt and decode tokens/s.
 *   2. service  `node dist/server.js` as a child process over a DATA_DIR pre-built with 10k, then
 *               100k chunks (bench/search.ts's synthetic corpus and low-rank vectors, written straight
 *               into SQLite and the HNSW file; the tiny test embedding model, 384 dimensions, embeds
 *               the questions) and MODEL_DIR holding stories260K. Each question is POSTed to
 *               /api/chat with Accept: text/event-stream over real HTTP, twice, each time timed to
 *               the first `delta` event; after each ask the direct model answers the prompt the
 *               service sent (rebuilt from the `done` event's sources with plugins/chat/prompt.ts) with
 *               the same maxTokens, on one sequence kept across questions as the service keeps its
 *               own, so both sides hold the same KV cache at every step. First ask: the prompt is
 *               evaluated whole on both sides (~1.5 s for ~1,300 tokens here, varying by hundreds of ms
 *               on a shared 2-core box, which buries a difference of a few ms). Second ask: both
 *               sequences already hold that exact prompt, so neither evaluates it again and the
 *               difference is what the service does around the model. The overhead (the target's
 *               figure) is, per question, second-ask service TTFT minus direct TTFT, both to the
 *               first text a reader sees (the marker filter holds back trailing blanks and open
 *               "[n" markers). Also reported: the service's own timing.classify and timing.retrieve,
 *               and the prompt assembly (fitPrompt with the model's tokenizer plus the count
 *               LocalGenerator.generate makes again) timed here, with the same tokenizer, on the same
 *               retrieval results (POST /api/search, same k and mode).
 * Sanity checks, reported: the service and the direct run produce the same text (greedy decoding,
 * same prompt, same cache state), and fitPrompt here reproduces the sources the service streamed.
 *
 * stories260K is a story model with no chat template (the service applies node-llama-cpp's
 * GeneralChatWrapper): it measures the runtime, not answer quality.
 *
 * Alone: `npm run build && npx tsx bench/chat.ts`. BENCH_CHAT_SIZES (10000,100000),
 * BENCH_CHAT_QUESTIONS (20), BENCH_CHAT_WARMUP (3), BENCH_CHAT_RUNS (20 direct runs of the fixed
 * prompt), BENCH_CHAT_EMBEDDER (tiny; shipped: the chat's retrieval runs soft term matching), BENCH_CHAT_THREADS (1: more threads than cores collapses llama.cpp's throughput),
 * BENCH_CHAT_N_CTX (2048, stories260K's trained context), BENCH_CHAT_GGUF (../shared/models/stories260K).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { GeneralChatWrapper, LlamaChat, LlamaLogLevel, getLlama, type ChatHistoryItem, type ChatWrapper, type Llama, type LlamaModel } from 'node-llama-cpp';
import { buildApp } from '../core/app.js';
import { loadConfig } from '../core/config.js';
import { installShippedEmbedder } from '../native/embeddings/index.js';
import { importLlm, type ChatMessage } from '../native/llm/index.js';
import type { SourceView } from '../plugins/conversations/schemas.js';
import { MarkerFilter } from '../plugins/chat/markers.js';
import { buildMessages } from '../plugins/chat/prompt.js';
import { relevantResults } from '../plugins/chat/relevance.js';
import { toSource } from '../plugins/chat/service.js';
import { fitPrompt, reservedCompletion, type TokenBudget } from '../plugins/chat/token-budget.js';
import type { SearchResult } from '../plugins/retrieval/service.js';
import { STORIES_GGUF } from '../test/fixtures/models.js';
import { readEventStream } from '../test/fixtures/sse.js';
import { installTinyEmbeddingModel } from '../test/fixtures/tiny-embedding-model.js';
import { BENCH_SECRETS, DEPLOYED_ENV, login, ROOT, type Service, startService, stats, type Stats, stopService } from './harness.js';
import { queriesFrom, rng, seedForBoot, syntheticDocuments } from './search.js';

export const CHAT_OVERHEAD_TARGET_MS = 50;
const DEFAULT_GGUF = STORIES_GGUF;
/** What the chat asks retrieval for by default (plugins/chat/service.ts CHAT_DEFAULT_K, mode hybrid). */
const CHAT_K = 5;
const FIXED_PROMPT_MAX_TOKENS = 128;

export interface ChatBenchOptions {
  serverScript: string;
  sizes?: number[];
  questions?: number;
  warmup?: number;
  directRuns?: number;
  threads?: number;
  nCtx?: number;
  gguf?: string;
  /** Write V8 CPU profiles of the service here. */
  cpuProfileDir?: string;
  log?: (line: string) => void;
}

export interface DirectResult {
  prompt: string;
  promptTokens: number;
  maxTokens: number;
  runs: number;
  /** First text a reader would see (after the marker filter), from the generateResponse call. */
  ttftMs: Stats;
  /** First text chunk of any kind. */
  ttftRawMs: Stats;
  /** Prompt tokens / time to first token (the prompt's evaluation dominates it). */
  promptTokensPerSecond: Stats;
  /** (completion tokens - 1) / (last token - first token). */
  decodeTokensPerSecond: Stats;
  completionTokens: Stats;
}

export interface ChatSizeResult {
  chunks: number;
  /** Seconds to write the corpus (SQLite + FTS5 + HNSW) and to boot the service over it. */
  buildSeconds: number;
  bootSeconds: number;
  questions: number;
  /** Questions whose stream brought at least one delta (the others are left out of the figures). */
  measured: number;
  promptTokens: Stats;
  sourcesSent: Stats;
  trimmedByBudget: number;
  /** Second ask of each question (its prompt already in both KV caches): fetch() to the first `delta` event, over HTTP. */
  serviceTtftMs: Stats;
  /** The same prompts, in the same order and cache state, through node-llama-cpp directly. */
  directTtftMs: Stats;
  /** Per question: service TTFT - direct TTFT, second asks (the target's figure). */
  overheadMs: Stats;
  /** First asks: the whole prompt evaluated on both sides; the difference drowns in the evaluation's variance on a busy box. */
  cold: { serviceTtftMs: Stats; directTtftMs: Stats; overheadMs: Stats; retrieveMs: Stats };
  /** Decode speed of the direct runs of these prompts (first asks). */
  decodeTokensPerSecond: Stats;
  /** The `done` event's timing of the second asks, as the service measured it. */
  classifyMs: Stats;
  retrieveMs: Stats;
  classifyPlusRetrieveMs: Stats;
  /** fitPrompt + LocalGenerator's second count, timed in this process on the same retrieval results. */
  promptAssemblyMs: Stats;
  /** Tokenizer passes the assembly made (whole-prompt counts + per-piece counts). */
  tokenizerPasses: Stats;
  /** overhead - classify - retrieve - assembly: HTTP, auth, validation, SSE, the queue, the rest. */
  remainderMs: Stats;
  checks: { sameAnswer: number; sameSources: number; samePromptTokens: number; promptTokensChecked: number };
  loadavg: number[];
  pass: boolean;
}

export interface ChatBenchResult {
  model: { file: string; nodeLlamaCpp: string; parameters: string; contextEffective: number; threads: number; device: string; chatWrapper: string; note: string };
  settings: { sizes: number[]; questions: number; warmup: number; directRuns: number; threads: number; nCtx: number; k: number; mode: string; embeddingModel: string };
  direct: DirectResult;
  sizes: ChatSizeResult[];
  target: { maxOverheadMs: number; statistic: string; pass: boolean };
}

// --- small helpers ---

export { stats, type Stats };

async function api<T>(service: Service, method: string, route: string, token: string | null, body?: unknown): Promise<T> {
  const res = await fetch(`${service.url}${route}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

// --- the model, called directly (the same calls as native/llm/local-generator.ts) ---

function toHistory(messages: ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m) => (m.role === 'assistant' ? { type: 'model', response: [m.content] } : { type: m.role, text: m.content }));
  history.push({ type: 'model', response: [] });
  return history;
}

interface Direct {
  llama: Llama;
  model: LlamaModel;
  wrapper: ChatWrapper;
  counter: { countTokens(text: string): number; countPromptTokens(messages: ChatMessage[]): number };
}

async function openDirect(gguf: string, threads: number): Promise<Direct> {
  // As the service does: llama.cpp's warnings about harmless GGUF details stay quiet, errors show.
  const logger = (level: LlamaLogLevel, message: string) => (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal ? console.error(`llama.cpp: ${message}`) : undefined);
  const llama = await getLlama({ build: 'never', gpu: false, maxThreads: threads, logLevel: LlamaLogLevel.warn, logger });
  const model = await llama.loadModel({ modelPath: gguf, gpuLayers: 0 });
  // The service's choice for a GGUF without a chat template (stories260K has none).
  const wrapper = model.fileInfo.metadata.tokenizer?.chat_template ? null : new GeneralChatWrapper();
  if (!wrapper) throw new Error('this bench mirrors the plain-wrapper path: use a GGUF without a chat template (stories260K)');
  const counter = {
    countTokens: (text: string) => model.tokenize(text).length,
    countPromptTokens: (messages: ChatMessage[]) => wrapper.generateContextState({ chatHistory: toHistory(messages) }).contextText.tokenize(model.tokenizer).length,
  };
  return { llama, model, wrapper, counter };
}

interface Generation {
  ttftRaw: number;
  ttftVisible: number;
  completionTokens: number;
  decodeTokensPerSecond: number;
  text: string;
}

/** One generation with the service's stream semantics: markers filtered, empty pieces not counted as the first token. */
async function generate(chat: LlamaChat, messages: ChatMessage[], maxTokens: number, sourceCount: number): Promise<Generation> {
  const markers = new MarkerFilter(sourceCount);
  let raw = 0;
  let visible = 0;
  let firstToken = 0;
  let lastToken = 0;
  let tokens = 0;
  let text = '';
  const started = performance.now();
  await chat.generateResponse(toHistory(messages), {
    maxTokens,
    onTextChunk: (chunk) => {
      const now = performance.now();
      if (!raw) raw = now;
      const out = markers.push(chunk);
      text += out;
      if (!visible && out) visible = now;
    },
    onToken: (piece) => {
      const now = performance.now();
      if (!tokens) firstToken = now;
      tokens += piece.length;
      lastToken = now;
    },
  });
  const ended = performance.now();
  const rest = markers.flush();
  text += rest;
  if (!visible && rest) visible = ended;
  return {
    ttftRaw: (raw || ended) - started,
    ttftVisible: visible ? visible - started : NaN,
    completionTokens: tokens,
    decodeTokensPerSecond: tokens > 1 ? (tokens - 1) / ((lastToken - firstToken) / 1000) : NaN,
    text,
  };
}

// --- the service ---

interface Streamed {
  ttft: number;
  answer: string;
  done: { sources: SourceView[]; token_budget: TokenBudget | null; timing: { classify: number; retrieve: number; generate: number } };
}

async function streamChat(service: Service, token: string, query: string): Promise<Streamed> {
  const started = performance.now();
  const res = await fetch(`${service.url}/api/chat`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  if (res.status !== 200) throw new Error(`POST /api/chat: ${res.status} ${await res.text()}`);
  let first = 0;
  let answer = '';
  let done: Streamed['done'] | undefined;
  let error: unknown;
  await readEventStream(res, (event) => {
    if (event.event === 'delta') {
      if (!first) first = performance.now();
      answer += event.data.text;
    } else if (event.event === 'done') done = event.data;
    else if (event.event === 'error') error = event.data;
  });
  if (error || !done) throw new Error(`POST /api/chat streamed ${error ? `an error: ${JSON.stringify(error)}` : 'no done event'}`);
  return { ttft: first ? first - started : NaN, answer, done };
}

/** Writes the corpus straight into SQLite and the HNSW file of DATA_DIR, as the service will find them at boot. */
async function buildCorpus(size: number, questions: number, embedModelDir: string): Promise<{ dataDir: string; chunks: number; queries: string[] }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-chat-'));
  const config = loadConfig({ DATA_DIR: dataDir, MODEL_DIR: embedModelDir, LOG_LEVEL: 'ERROR', ...BENCH_SECRETS }, { secretDirs: [] });
  const app = await buildApp({ config });
  try {
    const { seeded, random } = await seedForBoot(app, size);
    const { specific } = queriesFrom(seeded.map((c) => c.text), questions, random);
    return { dataDir, chunks: seeded.length, queries: specific };
  } finally {
    await app.close();
  }
}

// --- the bench ---

export async function benchChat(opts: ChatBenchOptions): Promise<ChatBenchResult> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const sizes = opts.sizes ?? [10_000, 100_000];
  const questions = opts.questions ?? 20;
  const warmup = opts.warmup ?? 3;
  const directRuns = opts.directRuns ?? 20;
  const threads = opts.threads ?? 1;
  const nCtx = opts.nCtx ?? 2048;
  const gguf = opts.gguf ?? DEFAULT_GGUF;

  const embedModelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-chat-embed-'));
  const modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-chat-models-'));
  let direct: Direct | undefined;
  try {
    // Both folders hold the same embedding model (same bytes, same model id): one to write the corpus, one for the
    // service. BENCH_CHAT_EMBEDDER: the tiny test model (the default), or shipped, the embedder a fresh box installs,
    // with which the chat's retrieval runs soft term matching (CHAT_SOFT_MATCH_CHUNKS passes through to the service).
    const install = process.env.BENCH_CHAT_EMBEDDER === 'shipped' ? (dir: string) => installShippedEmbedder({ modelDir: dir }) : (dir: string) => installTinyEmbeddingModel(dir, { hidden: 384 });
    await install(embedModelDir);
    await install(modelDir);
    await importLlm(gguf, { modelDir, id: 'stories260K' });
    const installed = path.join(modelDir, 'llm', 'stories260K', 'model.gguf');
    direct = await openDirect(installed, threads);
    const effective = Math.min(nCtx, direct.model.trainContextSize);

    // 1. node-llama-cpp alone: a fixed prompt of the chat's shape, evaluated whole every run.
    const sample = syntheticDocuments(CHAT_K, rng(7))[0].chunks.map((chunk, i): SourceView => ({ marker: i + 1, chunk_id: `fixed:${i}`, document_id: 'fixed', filename: 'doc-0.txt', ...(chunk.heading ? { heading: chunk.heading } : {}), score: 1 / (i + 1), text: chunk.text }));
    const fixedQuery = `how ${sample[0].text.split(' ').slice(3, 6).join(' ')} ?`;
    const fixed = fitPrompt(direct.counter, effective, [], sample, fixedQuery);
    const fixedContext = await direct.model.createContext({ contextSize: effective, threads, sequences: 1 });
    const fixedSequence = fixedContext.getSequence();
    const runs: Generation[] = [];
    log(`  direct: ${fixed.budget.estimated_prompt}-token prompt (${fixed.sources.length} sources), ${FIXED_PROMPT_MAX_TOKENS} tokens at most, ${directRuns} runs + 2 warm-up…`);
    for (let i = 0; i < directRuns + 2; i++) {
      await fixedSequence.clearHistory();
      const chat = new LlamaChat({ contextSequence: fixedSequence, chatWrapper: direct.wrapper, autoDisposeSequence: false });
      const run = await generate(chat, fixed.messages, FIXED_PROMPT_MAX_TOKENS, fixed.sources.length);
      chat.dispose();
      if (i >= 2) runs.push(run);
    }
    await fixedContext.dispose();
    const directResult: DirectResult = {
      prompt: `system + ${fixed.sources.length} numbered sources + question (bench/search.ts corpus), fitted to ${effective} tokens`,
      promptTokens: fixed.budget.estimated_prompt,
      maxTokens: FIXED_PROMPT_MAX_TOKENS,
      runs: runs.length,
      ttftMs: stats(runs.map((r) => r.ttftVisible)),
      ttftRawMs: stats(runs.map((r) => r.ttftRaw)),
      promptTokensPerSecond: stats(runs.map((r) => fixed.budget.estimated_prompt / (r.ttftRaw / 1000))),
      decodeTokensPerSecond: stats(runs.map((r) => r.decodeTokensPerSecond)),
      completionTokens: stats(runs.map((r) => r.completionTokens)),
    };
    log(`  direct: time to first token p50 ${directResult.ttftMs.p50} ms, decode ${directResult.decodeTokensPerSecond.p50.toFixed(0)} tokens/s`);

    // 2. the service at each size, each question paired with the same prompt through node-llama-cpp.
    const sizeResults: ChatSizeResult[] = [];
    let modelInfo: { chat: { context: { effective: number }; threads: number; device: string; parameters: number | null; file: string } } | undefined;
    for (const size of sizes) {
      let started = performance.now();
      log(`  ${size} chunks: writing the corpus…`);
      const corpus = await buildCorpus(size, questions + warmup, embedModelDir);
      const buildSeconds = (performance.now() - started) / 1000;
      let service: Service | undefined;
      const context = await direct.model.createContext({ contextSize: effective, threads, sequences: 1 });
      try {
        started = performance.now();
        service = await startService(
          opts.serverScript,
          { ...DEPLOYED_ENV, DATA_DIR: corpus.dataDir, MODEL_DIR: modelDir, N_CTX: String(nCtx), N_THREADS: String(threads), LOG_LEVEL: 'ERROR', ...BENCH_SECRETS },
          {
            nodeArgs: opts.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfileDir, '--cpu-prof-name', `chat-${Date.now()}.cpuprofile`] : [],
            timeoutMs: 180_000,
            killOnTimeout: true,
          },
        );
        const bootSeconds = (performance.now() - started) / 1000;
        const token = await login(service.url);
        modelInfo = await api(service, 'GET', '/api/model-info', token);
        if (!modelInfo?.chat) throw new Error('the service loaded no chat model');
        if (modelInfo.chat.context.effective !== effective || modelInfo.chat.threads !== threads) {
          throw new Error(`the service runs a context of ${modelInfo.chat.context.effective} tokens on ${modelInfo.chat.threads} threads; the direct model ${effective} on ${threads}`);
        }
        const index = await api<{ chunks: number; vectors: number; stale_chunks: number }>(service, 'GET', '/api/index/stats', token);
        if (index.vectors !== corpus.chunks || index.stale_chunks !== 0) throw new Error(`the service's index is not the pre-built one: ${JSON.stringify(index)}`);
        log(`  ${size} chunks: corpus written in ${buildSeconds.toFixed(1)} s, service up in ${bootSeconds.toFixed(1)} s; ${warmup} warm-up + ${questions} questions…`);

        // One sequence for the whole run, as LocalGenerator keeps one: both sides reuse the same cached prefix.
        const chat = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: direct.wrapper, autoDisposeSequence: false });
        const rows: { service: number; direct: number; coldService: number; coldDirect: number; classify: number; retrieve: number; coldRetrieve: number; assembly: number; passes: number; promptTokens: number; sources: number; trimmed: boolean; decode: number }[] = [];
        const checks = { sameAnswer: 0, sameSources: 0, samePromptTokens: 0, promptTokensChecked: 0 };
        for (const [i, query] of corpus.queries.entries()) {
          // First ask: the prompt is new to both sequences (beyond the shared system prefix) and is evaluated whole.
          const first = await streamChat(service, token, query);
          const { sources, token_budget: budget } = first.done;
          const messages = buildMessages([], sources, query);
          const maxTokens = budget?.reserved_completion ?? reservedCompletion(effective);
          const firstOwn = await generate(chat, messages, maxTokens, sources.length);
          // Second ask of the same question: both sequences hold this very prompt, so neither evaluates it
          // again and the difference is what the service does around the model, not prompt-evaluation noise.
          const again = await streamChat(service, token, query);
          const againOwn = await generate(chat, messages, maxTokens, sources.length);
          if (i < warmup) continue;

          // Prompt assembly on the same retrieval results, with the model's own tokenizer.
          const search = await api<{ results: SearchResult[]; retrieval_settings: { score: string } }>(service, 'POST', '/api/search', token, { query, k: CHAT_K, mode: 'hybrid' });
          const found = relevantResults(search.results, query, search.retrieval_settings.score).map(toSource);
          let passes = 0;
          const counting = {
            countTokens: (text: string) => (passes++, direct!.counter.countTokens(text)),
            countPromptTokens: (m: ChatMessage[]) => (passes++, direct!.counter.countPromptTokens(m)),
          };
          const assembly: number[] = [];
          let fitted = fitPrompt(counting, effective, [], found, query);
          for (let r = 0; r < 5; r++) {
            passes = 0;
            const t0 = performance.now();
            fitted = fitPrompt(counting, effective, [], found, query);
            counting.countPromptTokens(fitted.messages); // LocalGenerator.generate counts the prompt again
            assembly.push(performance.now() - t0);
          }
          const promptTokens = direct.counter.countPromptTokens(messages);
          const ids = (list: SourceView[]) => JSON.stringify(list.map((s) => s.chunk_id));
          if (ids(fitted.sources) === ids(sources) && ids(again.done.sources) === ids(sources)) checks.sameSources++;
          if (budget) {
            checks.promptTokensChecked++;
            if (budget.estimated_prompt === promptTokens) checks.samePromptTokens++;
          }
          if (firstOwn.text === first.answer && againOwn.text === again.answer) checks.sameAnswer++;
          if ([first.ttft, firstOwn.ttftVisible, again.ttft, againOwn.ttftVisible].some(Number.isNaN)) continue;
          rows.push({
            service: again.ttft,
            direct: againOwn.ttftVisible,
            coldService: first.ttft,
            coldDirect: firstOwn.ttftVisible,
            classify: again.done.timing.classify,
            retrieve: again.done.timing.retrieve,
            coldRetrieve: first.done.timing.retrieve,
            assembly: stats(assembly).p50,
            passes,
            promptTokens,
            sources: sources.length,
            trimmed: budget !== null,
            decode: firstOwn.decodeTokensPerSecond,
          });
        }
        chat.dispose();
        const overhead = rows.map((r) => r.service - r.direct);
        const result: ChatSizeResult = {
          chunks: corpus.chunks,
          buildSeconds: Math.round(buildSeconds * 10) / 10,
          bootSeconds: Math.round(bootSeconds * 10) / 10,
          questions,
          measured: rows.length,
          promptTokens: stats(rows.map((r) => r.promptTokens)),
          sourcesSent: stats(rows.map((r) => r.sources)),
          trimmedByBudget: rows.filter((r) => r.trimmed).length,
          serviceTtftMs: stats(rows.map((r) => r.service)),
          directTtftMs: stats(rows.map((r) => r.direct)),
          overheadMs: stats(overhead),
          cold: {
            serviceTtftMs: stats(rows.map((r) => r.coldService)),
            directTtftMs: stats(rows.map((r) => r.coldDirect)),
            overheadMs: stats(rows.map((r) => r.coldService - r.coldDirect)),
            retrieveMs: stats(rows.map((r) => r.coldRetrieve)),
          },
          decodeTokensPerSecond: stats(rows.map((r) => r.decode)),
          classifyMs: stats(rows.map((r) => r.classify)),
          retrieveMs: stats(rows.map((r) => r.retrieve)),
          classifyPlusRetrieveMs: stats(rows.map((r) => r.classify + r.retrieve)),
          promptAssemblyMs: stats(rows.map((r) => r.assembly)),
          tokenizerPasses: stats(rows.map((r) => r.passes)),
          remainderMs: stats(rows.map((r, i) => overhead[i] - r.classify - r.retrieve - r.assembly)),
          checks,
          loadavg: os.loadavg(),
          pass: rows.length > 0 && stats(overhead).p50 < CHAT_OVERHEAD_TARGET_MS,
        };
        sizeResults.push(result);
        log(`  ${size} chunks: service adds ${result.overheadMs.p50} ms (p50) before the first token`);
      } finally {
        if (service) await stopService(service);
        await context.dispose();
        await rm(corpus.dataDir, { recursive: true, force: true });
      }
    }

    const version = (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'node-llama-cpp', 'package.json'), 'utf8')) as { version: string }).version;
    return {
      model: {
        file: path.basename(gguf),
        nodeLlamaCpp: version,
        parameters: modelInfo?.chat.parameters ? `${Math.round(modelInfo.chat.parameters / 1000)}K` : 'unknown',
        contextEffective: effective,
        threads,
        device: modelInfo?.chat.device ?? 'cpu',
        chatWrapper: direct.wrapper.wrapperName,
        note: 'stories260K: a real 260K-parameter Llama (F32) with no chat template; it measures the runtime, not answers',
      },
      settings: { sizes, questions, warmup, directRuns, threads, nCtx, k: CHAT_K, mode: 'hybrid', embeddingModel: 'tiny test model (bag of tokens, 384 dimensions): embeds the questions; the corpus vectors are synthetic' },
      direct: directResult,
      sizes: sizeResults,
      target: {
        maxOverheadMs: CHAT_OVERHEAD_TARGET_MS,
        statistic: 'p50 over the questions of (service TTFT over HTTP - direct node-llama-cpp TTFT, same prompt)',
        pass: sizeResults.length > 0 && sizeResults.every((r) => r.pass),
      },
    };
  } finally {
    await direct?.llama.dispose();
    await rm(embedModelDir, { recursive: true, force: true });
    await rm(modelDir, { recursive: true, force: true });
  }
}

/** One row per series and size, for console.table. */
export function chatTable(result: ChatBenchResult): Record<string, Record<string, number | string>> {
  const row = (s: Stats) => ({ p50: s.p50, p95: s.p95, mean: s.mean });
  const table: Record<string, Record<string, number | string>> = {
    'direct TTFT, fixed prompt': { ...row(result.direct.ttftMs), n: result.direct.runs },
  };
  for (const r of result.sizes) {
    const k = `${Math.round(r.chunks / 1000)}k`;
    table[`${k} first ask: service TTFT (HTTP)`] = { ...row(r.cold.serviceTtftMs), n: r.measured };
    table[`${k} first ask: direct TTFT, same prompt`] = { ...row(r.cold.directTtftMs), n: r.measured };
    table[`${k} first ask: service - direct`] = { ...row(r.cold.overheadMs), n: r.measured };
    table[`${k} second ask: service TTFT (HTTP)`] = { ...row(r.serviceTtftMs), n: r.measured };
    table[`${k} second ask: direct TTFT`] = { ...row(r.directTtftMs), n: r.measured };
    table[`${k} OVERHEAD (service - direct)`] = { ...row(r.overheadMs), n: r.measured };
    table[`${k}   classify + retrieve`] = { ...row(r.classifyPlusRetrieveMs), n: r.measured };
    table[`${k}     of which retrieve`] = { ...row(r.retrieveMs), n: r.measured };
    table[`${k}   prompt assembly`] = { ...row(r.promptAssemblyMs), n: r.measured };
    table[`${k}   remainder (HTTP, auth, SSE…)`] = { ...row(r.remainderMs), n: r.measured };
  }
  return table;
}

export function formatChatBench(result: ChatBenchResult): string {
  const d = result.direct;
  const lines = [
    `chat, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), node ${process.version}, node-llama-cpp ${result.model.nodeLlamaCpp}, ` +
      `${result.model.file} (${result.model.parameters} parameters), context ${result.model.contextEffective}, ${result.model.threads} thread(s), ${result.model.device}`,
    `direct node-llama-cpp, ${d.promptTokens}-token prompt, ${d.runs} runs: time to first token p50 ${d.ttftMs.p50} ms (p95 ${d.ttftMs.p95}); ` +
      `prompt ${d.promptTokensPerSecond.p50.toFixed(0)} tokens/s, decode ${d.decodeTokensPerSecond.p50.toFixed(0)} tokens/s (p50 over ${d.completionTokens.p50} tokens)`,
  ];
  for (const r of result.sizes) {
    lines.push(
      `${r.chunks} chunks, ${r.measured} questions (prompts p50 ${r.promptTokens.p50} tokens, ${r.sourcesSent.p50} sources; ${r.trimmedByBudget} trimmed by the budget): ` +
        `first ask (whole prompt evaluated): service TTFT p50 ${r.cold.serviceTtftMs.p50} ms vs direct ${r.cold.directTtftMs.p50} ms; ` +
        `second ask (prompt cached on both sides): service ${r.serviceTtftMs.p50} ms vs direct ${r.directTtftMs.p50} ms; ` +
        `overhead p50 ${r.overheadMs.p50} ms, p95 ${r.overheadMs.p95} ms = classify ${r.classifyMs.p50} + retrieve ${r.retrieveMs.p50} (p95 ${r.retrieveMs.p95}) + prompt assembly ${r.promptAssemblyMs.p50} ` +
        `(${r.tokenizerPasses.p50} tokenizer passes) + remainder ${r.remainderMs.p50} ms (p50s; load average ${r.loadavg.map((l) => l.toFixed(2)).join(' ')})`,
      `  checks: same answer text ${r.checks.sameAnswer}/${r.measured}, same sources refitted ${r.checks.sameSources}/${r.measured}, same prompt tokens ${r.checks.samePromptTokens}/${r.checks.promptTokensChecked} (where the budget reported them)`,
    );
  }
  const verdict = result.sizes.map((r) => `${Math.round(r.chunks / 1000)}k ${r.overheadMs.p50} ms`).join(', ');
  lines.push(`${result.target.pass ? 'PASS' : 'FAIL'}: the service adds ${verdict} (p50) before the first token (target < ${result.target.maxOverheadMs} ms)`);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const numbers = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').map(Number);
  const result = await benchChat({
    serverScript: path.join(ROOT, 'dist', 'server.js'),
    sizes: numbers('BENCH_CHAT_SIZES', '10000,100000'),
    questions: numbers('BENCH_CHAT_QUESTIONS', '20')[0],
    warmup: numbers('BENCH_CHAT_WARMUP', '3')[0],
    directRuns: numbers('BENCH_CHAT_RUNS', '20')[0],
    threads: numbers('BENCH_CHAT_THREADS', '1')[0],
    nCtx: numbers('BENCH_CHAT_N_CTX', '2048')[0],
    gguf: process.env.BENCH_CHAT_GGUF,
  });
  console.table(chatTable(result));
  console.log(formatChatBench(result));
}
