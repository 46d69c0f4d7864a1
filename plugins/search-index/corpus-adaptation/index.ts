import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { JobFailure, type JobRunner } from '../../../core/jobs/runner.js';
import { embedderModelId } from '../../../native/embeddings/index.js';
import { listInstalledModels, resolveActiveModel, setActiveModel } from '../../../native/model-files/index.js';
import type { ActiveEmbedding } from '../active-embedding.js';
import { runInWorker, type BackgroundWork } from '../../../core/background-worker.js';
import { ADAPTED_SOURCE_PREFIX, type AdaptOptions, type AdaptResult } from './build.js';

/**
 * The adaptation's worker's young generation: the tokenizer's short-lived arrays otherwise grow it to V8's default.
 * At 100k chunks 4 MB takes 20-36 MiB off the process's peak for a few % more time (bench/corpus-adaptation.ts).
 */
export const ADAPT_WORKER_YOUNG_MB = 4;

/** `buildAdaptedModel` in a worker thread, as the service runs it. */
export function adaptInWorker(options: AdaptOptions, progress: (message: string) => void, youngMb = ADAPT_WORKER_YOUNG_MB): BackgroundWork<AdaptResult> {
  return runInWorker<AdaptResult>(import.meta.url, './worker.ts', './corpus-adaptation-worker.js', options, 'corpus adaptation', progress, youngMb > 0 ? { maxYoungGenerationSizeMb: youngMb } : undefined);
}

/** The status's detail with no embedding model in force (for a moment at first start, while the shipped one installs). */
export const NO_MODEL = 'no embedding model in force';

/** The status while jobs run: an adaptation waits for them. */
export const BUSY = 'jobs are running (documents being indexed): looked at again once they are idle';

/** The collection must have grown or shrunk by this share since the model in force was adapted to adapt again. */
export const ADAPT_AGAIN_AFTER = 0.25;

/**
 * off: EMBED_ADAPT=off, no embedding model in force, or the model in force is not a static one; waiting: too few
 * (or too many) chunks, nothing changed enough, the collection still changing, or jobs running; adapting: the job runs (the vector index is rebuilt after it); in_force: search uses the adapted model;
 * failed: the last adaptation failed (tried again when the collection changes). A collection with too few distinct
 * frequent words for a corpus part stays `waiting` (nothing installed) until it changes.
 */
export interface CorpusAdaptationStatus {
  state: 'off' | 'waiting' | 'adapting' | 'in_force' | 'failed';
  detail: string;
}

export interface CorpusAdaptationOptions {
  enabled: boolean;
  /** EMBED_ADAPT_MIN_CHUNKS. */
  minChunks: number;
  /** EMBED_ADAPT_MAX_CHUNKS (0: no limit). */
  maxChunks: number;
  modelDir: string;
  databaseFile: string;
  log: FastifyBaseLogger;
}

/**
 * Keeps the static embedder in force adapted to the collection (issue 16 item 5; adapt.ts says how). When the jobs
 * are idle and the collection has at least EMBED_ADAPT_MIN_CHUNKS chunks, and no model adapted to it within
 * ADAPT_AGAIN_AFTER is in force, an `index.adapt` job builds the adapted model in a worker thread, installs it in
 * MODEL_DIR and makes it active; the embedder lifecycle then rebuilds the vector index in the background (search
 * answering from the previous model meanwhile). Adapted models no longer active or in force are removed.
 */
export class CorpusAdaptation {
  private work: BackgroundWork<AdaptResult> | null = null;
  private checking = false;
  /**
   * The chunk count an adaptation failed at, was cancelled at, or found too few distinct words at: not tried again
   * until the collection changes.
   */
  private triedAt: number | null = null;
  /** The chunk count at the previous check: an adaptation waits until the collection holds still for one check. */
  private lastCount: number | null = null;
  private status: CorpusAdaptationStatus;

  constructor(
    private readonly activeEmbedding: ActiveEmbedding,
    private readonly jobs: JobRunner,
    private readonly countChunks: () => Promise<number>,
    /** Puts MODEL_DIR's active model in force (the lifecycle's sync: a background rebuild). */
    private readonly putActiveInForce: () => Promise<void>,
    private readonly options: CorpusAdaptationOptions,
  ) {
    this.status = options.enabled ? { state: 'waiting', detail: 'not checked yet' } : { state: 'off', detail: 'EMBED_ADAPT=off' };
  }

  current(): CorpusAdaptationStatus {
    return { ...this.status };
  }

  /** Starts an adaptation when one is due; cheap when none is (called on a timer). */
  async check(): Promise<void> {
    if (!this.options.enabled || this.work || this.checking) return;
    if (this.jobs.busy()) {
      // What an earlier check found (e.g. 0 chunks at boot) no longer holds while documents are indexed.
      if (this.status.state === 'waiting') this.status = { state: 'waiting', detail: BUSY };
      return;
    }
    this.checking = true;
    try {
      await this.due();
    } finally {
      this.checking = false;
    }
  }

  async stop(): Promise<void> {
    await this.work?.cancel();
  }

  private async due(): Promise<void> {
    const { modelDir, minChunks, maxChunks } = this.options;
    const inForce = this.activeEmbedding.embedder();
    const active = await resolveActiveModel(modelDir, 'embedding');
    if (!inForce || !active) {
      this.status = { state: 'off', detail: NO_MODEL };
      return;
    }
    if (active.manifest.format !== 'model2vec' || !inForce.tokenTable) {
      this.status = { state: 'off', detail: 'the embedding model in force is not a static (Model2Vec) model' };
      return;
    }
    // A model switch in flight: its rebuild first.
    if (embedderModelId(active.manifest) !== inForce.modelId) return;
    const adaptedFrom = active.manifest.source.startsWith(ADAPTED_SOURCE_PREFIX) ? active.manifest.source.slice(ADAPTED_SOURCE_PREFIX.length) : null;
    const chunks = await this.countChunks();
    const steady = chunks === this.lastCount;
    this.lastCount = chunks;
    const adaptedTo = adaptedFrom ? await adaptedChunks(active.folder) : null;
    if (adaptedFrom) await this.removeStale(active.id, inForce.modelId);
    if (adaptedTo !== null && Math.abs(chunks - adaptedTo) < ADAPT_AGAIN_AFTER * adaptedTo) {
      this.status = { state: 'in_force', detail: `${active.id}, adapted to ${adaptedTo} chunks (${chunks} now)` };
      return;
    }
    if (chunks < minChunks) {
      this.status = adaptedFrom
        ? { state: 'in_force', detail: `${active.id}, adapted to ${adaptedTo} chunks (${chunks} now, under EMBED_ADAPT_MIN_CHUNKS ${minChunks})` }
        : { state: 'waiting', detail: `${chunks} chunks: the embedder is adapted to the collection from ${minChunks} (EMBED_ADAPT_MIN_CHUNKS)` };
      return;
    }
    if (maxChunks > 0 && chunks > maxChunks) {
      const over = `over EMBED_ADAPT_MAX_CHUNKS ${maxChunks}: not adapted again (the index's rebuild onto a new model holds two indexes at once)`;
      this.status = adaptedFrom
        ? { state: 'in_force', detail: `${active.id}, adapted to ${adaptedTo} chunks (${chunks} now, ${over})` }
        : { state: 'waiting', detail: `${chunks} chunks, ${over}` };
      return;
    }
    if (this.triedAt === chunks) return;
    // Uploads one after the other leave the jobs idle between them: adapt once they are over, not half-way.
    if (!steady) {
      this.status = { state: 'waiting', detail: `${chunks} chunks and changing: adapts once the collection holds still` };
      return;
    }
    await this.adapt(adaptedFrom ?? active.id, active.id, chunks);
  }

  private async adapt(baseId: string, activeId: string, chunks: number): Promise<void> {
    const { log } = this.options;
    this.status = { state: 'adapting', detail: `adapting ${baseId} to ${chunks} chunks: queued` };
    await this.jobs.enqueue('index.adapt', async (context) => {
      const data: AdaptOptions = { databaseFile: this.options.databaseFile, modelDir: this.options.modelDir, baseId };
      this.work = adaptInWorker(data, (message) => void (this.status = { state: 'adapting', detail: `adapting ${baseId}: ${message}` }));
      const cancel = () => void this.work?.cancel();
      context.signal.addEventListener('abort', cancel, { once: true });
      try {
        const result = await this.work.done.catch((error: Error) => {
          context.checkpoint();
          throw new JobFailure(`adapting ${baseId} to the collection failed: ${error.message}`);
        });
        context.report({ model: result.manifest?.id ?? null, chunks: result.chunks, tokens: result.tokens, adapted_tokens: result.corpusRows, seconds: Math.round(result.seconds) });
        if (!result.manifest) {
          this.triedAt = chunks;
          this.status = { state: 'waiting', detail: `${result.chunks} chunks with ${result.frequentTokens} distinct frequent words, ${result.frequentNeeded} needed: not adapted (tried again when the collection changes)` };
          log.info({ base: baseId, chunks: result.chunks, frequent_words: result.frequentTokens }, 'the collection has too few distinct words to adapt the embedder to: the model in force stays');
          return;
        }
        log.info({ model: result.manifest.id, base: baseId, chunks: result.chunks, seconds: Math.round(result.seconds) }, 'embedder adapted to the collection: rebuilding the vector index in the background; search uses the previous model meanwhile');
        this.triedAt = null;
        this.status = { state: 'in_force', detail: `${result.manifest.id}, adapted to ${result.chunks} chunks (the vector index is rebuilt in the background)` };
        if (result.manifest.id !== activeId) {
          await setActiveModel(this.options.modelDir, 'embedding', result.manifest.id);
          await this.putActiveInForce();
        }
      } catch (error) {
        this.triedAt = chunks;
        this.status = context.signal.aborted
          ? { state: 'waiting', detail: 'the adaptation was cancelled: adapts again when the collection changes' }
          : { state: 'failed', detail: error instanceof Error ? error.message : String(error) };
        throw error;
      } finally {
        context.signal.removeEventListener('abort', cancel);
        this.work = null;
      }
    });
  }

  /** Adapted models neither active nor in force: an earlier collection's, no longer needed. */
  private async removeStale(activeId: string, inForceModelId: string): Promise<void> {
    const { models } = await listInstalledModels(this.options.modelDir, 'embedding');
    for (const model of models) {
      if (!model.manifest.source.startsWith(ADAPTED_SOURCE_PREFIX) || model.id === activeId || embedderModelId(model.manifest) === inForceModelId) continue;
      await rm(model.folder, { recursive: true, force: true });
      this.options.log.info({ model: model.id }, 'removed an embedder adapted to an earlier state of the collection');
    }
  }
}

/** The chunk count an adapted model was made from (its config.json records it). */
async function adaptedChunks(folder: string): Promise<number | null> {
  try {
    const config = JSON.parse(await readFile(path.join(folder, 'config.json'), 'utf8')) as { hearth_corpus_adaptation?: { chunks?: unknown } };
    const chunks = config.hearth_corpus_adaptation?.chunks;
    return typeof chunks === 'number' ? chunks : null;
  } catch {
    return null;
  }
}
