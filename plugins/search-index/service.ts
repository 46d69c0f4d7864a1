import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../../core/clock.js';
import { OngoingProblem } from '../../core/ongoing-problem.js';
import type { Job } from '../../core/jobs/job.js';
import type { JobContext, JobRunner } from '../../core/jobs/runner.js';
import type { Embedder } from '../../native/embeddings/index.js';
import { openVectorIndex, type VectorIndex } from '../../native/vector-index/index.js';
import type { ChunksRepository } from './chunks-repository.js';
import type { ActiveEmbedding } from './active-embedding.js';
import type { IndexStore } from './store.js';

const EMBED_PAGE = 256;

/** Which vector index file belongs to which model: written atomically when a rebuild completes. */
interface CurrentPointer {
  model_id: string;
  base: string;
  rebuilt_at: string | null;
}

/** Counts are of the chunks one reader may read; the rest is the box's. */
export interface IndexStats {
  chunks: number;
  /** Of those chunks, the ones with a vector of the model in force (0 without a vector index). */
  vectors: number;
  dimension: number | null;
  model_id: string | null;
  device: string | null;
  /** Chunks without a vector of the model in force: they are found by keywords only until embedded. */
  stale_chunks: number;
  database_bytes: number;
  vectors_bytes: number;
  last_rebuild_at: string | null;
}

const safeName = (modelId: string) => modelId.replace(/[^A-Za-z0-9._-]+/g, '_');

/**
 * Keeps the vector index consistent with SQLite (the source of truth): repairs it at boot,
 * embeds what is missing in the background, and rebuilds it into a new file that replaces the
 * old one atomically, search answering from the old one meanwhile.
 */
export class IndexAdmin {
  private readonly dir: string;
  private pointer: CurrentPointer | null = null;
  /** Saves failing one after another (a full disk) are one warning, not one per save. */
  private readonly saveProblem: OngoingProblem;

  constructor(
    private readonly activeEmbedding: ActiveEmbedding,
    private readonly store: IndexStore,
    private readonly chunks: ChunksRepository,
    private readonly jobs: JobRunner,
    private readonly databaseFile: string,
    dataDir: string,
    private readonly log: FastifyBaseLogger,
  ) {
    this.dir = path.join(dataDir, 'index');
    this.saveProblem = new OngoingProblem(
      log,
      'the vector index could not be saved: search goes on from memory, and the next start embeds again what the last save lacks',
      'the vector index is saved again',
    );
  }

  /** Every index this service opens reports its saves here instead of failing the work that asked for them. */
  private openIndex(file: string, embedder: Embedder): ReturnType<typeof openVectorIndex> {
    const onSaved = (error: Error | null) => (error ? this.saveProblem.report(error) : this.saveProblem.resolved());
    return openVectorIndex({ file, dimension: embedder.dimension, modelId: embedder.modelId, onSaved });
  }

  /**
   * At boot: opens this model's index, drops vectors without a chunk, forgets chunks whose vector
   * was lost. When the active model changed and the previous one is still installed, search keeps
   * using the previous model and index while a background job builds the new one.
   */
  async open(embedder: Embedder, loadPrevious: (modelId: string) => Promise<Embedder | null>): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const previous = await this.readPointer();
    if (previous && previous.model_id !== embedder.modelId) {
      const previousEmbedder = await loadPrevious(previous.model_id).catch(() => null);
      if (previousEmbedder) {
        this.pointer = previous;
        await this.serve(previousEmbedder, previous.base);
        this.log.warn({ from: previous.model_id, to: embedder.modelId }, 'embedding model changed: rebuilding the vector index in the background; search uses the previous model meanwhile');
        this.switchTo = embedder;
        return;
      }
      await this.removeFiles(previous.base);
    }
    this.pointer = previous?.model_id === embedder.modelId ? previous : { model_id: embedder.modelId, base: `${safeName(embedder.modelId)}.hnsw`, rebuilt_at: null };
    await this.serve(embedder, this.pointer.base);
    await this.writePointer(this.pointer);
  }

  /** Set while a model change waits for its rebuild (started once the app is ready). */
  private switchTo: Embedder | null = null;

  private async serve(embedder: Embedder, base: string): Promise<void> {
    const vectors = await this.openIndex(path.join(this.dir, base), embedder);
    if (vectors.discarded) this.log.warn({ reason: vectors.discarded }, 'saved vector index not used: its chunks are embedded again in the background');
    await this.reconcile(vectors, embedder.modelId);
    this.activeEmbedding.swap({ embedder, vectors });
  }

  /** After boot: the pending model switch's rebuild, or the embedding of chunks that have no vector yet. */
  async catchUp(): Promise<Job | undefined> {
    if (this.switchTo) {
      const next = this.switchTo;
      this.switchTo = null;
      return this.rebuild(next);
    }
    return this.embedPending();
  }

  private async reconcile(vectors: VectorIndex, modelId: string): Promise<void> {
    const rows = await this.chunks.embeddedWith(modelId);
    const embedded = new Set(rows.map((row) => row.rowid));
    const orphans = vectors.labels().filter((label) => !embedded.has(label));
    const lost = [...embedded].filter((rowid) => !vectors.has(rowid));
    if (orphans.length) vectors.remove(orphans);
    if (lost.length) await this.chunks.clearEmbedded(lost);
    // Access keys live in memory only: a loaded index gets them from the database.
    const kept = rows.filter((row) => vectors.has(row.rowid));
    vectors.setKeys(kept.map((row) => row.rowid), kept.map((row) => row.key));
    if (orphans.length || lost.length) {
      this.log.warn({ orphans: orphans.length, lost: lost.length }, 'vector index repaired against the database');
      await this.store.save(vectors);
    }
  }

  /** Embeds, in the background, every chunk that has no vector of the model in force. */
  async embedPending(): Promise<Job | undefined> {
    const embedder = this.activeEmbedding.embedder();
    if (!embedder || (await this.chunks.pendingFor(embedder.modelId, 0, 1)).length === 0) return undefined;
    return this.jobs.enqueue('index.embed', async (context) => {
      const vectors = this.activeEmbedding.vectors();
      if (vectors) await this.embedInto(vectors, embedder, context);
    });
  }

  /** Rebuilds every vector from SQLite into a new file; the old index answers until the new one is complete. */
  rebuild(target?: Embedder): Promise<Job> {
    return this.jobs.enqueue('index.rebuild', async (context) => {
      const embedder = target ?? this.activeEmbedding.embedder();
      if (!embedder) return;
      const base = `${safeName(embedder.modelId)}-${clock.now()}.hnsw`;
      const fresh = await this.openIndex(path.join(this.dir, base), embedder);
      const last = await this.embedInto(fresh, embedder, context, true);
      await this.chunks.markEmbeddedUpTo(last, embedder.modelId);
      // Documents deleted while the rebuild ran leave vectors behind in the new index: drop them.
      await this.reconcile(fresh, embedder.modelId);
      const previous = this.pointer;
      this.pointer = { model_id: embedder.modelId, base, rebuilt_at: clock.iso() };
      await this.writePointer(this.pointer);
      const replaced = this.activeEmbedding.swap({ embedder, vectors: fresh });
      if (replaced && replaced.embedder !== embedder) await replaced.embedder.close();
      if (previous && previous.base !== base) await this.removeFiles(previous.base);
      // Chunks ingested while the rebuild ran were embedded by the previous model: catch them up.
      await this.embedPending();
    });
  }

  /**
   * Walks chunks in rowid order (all of them for a rebuild, else those pending) and adds their vectors.
   * A rebuild records the new model on the chunks only once the new index is complete (see rebuild).
   */
  private async embedInto(vectors: VectorIndex, embedder: Embedder, context: JobContext, everything = false): Promise<number> {
    const total = everything ? await this.chunks.count() : undefined;
    let after = 0;
    let done = 0;
    for (;;) {
      context.checkpoint();
      const page = everything ? await this.chunks.page(after, EMBED_PAGE) : await this.chunks.pendingFor(embedder.modelId, after, EMBED_PAGE);
      if (page.length === 0) break;
      const rowids = page.map((chunk) => chunk.rowid);
      const embedded = await embedder.embed(page.map((chunk) => chunk.text));
      // A new index (a rebuild) is nobody else's until it is put in force; the index in force is written through the store.
      if (everything) vectors.add(rowids, embedded, await this.store.keysOf(rowids));
      else await this.store.addVectors(vectors, rowids, embedded, embedder.modelId);
      after = rowids[rowids.length - 1];
      done += page.length;
      await context.progress(done, total ?? done);
    }
    await this.store.save(vectors);
    return after;
  }

  /**
   * The index as one reader sees it (issue 18): chunk and vector counts cover only the documents their groups may
   * read; the model, the files' sizes on disk and the last rebuild are the box's, the same for everyone.
   */
  async stats(readerGroups: string[]): Promise<IndexStats> {
    const embedder = this.activeEmbedding.embedder();
    const vectors = this.activeEmbedding.vectors();
    const { chunks, pending } = await this.chunks.countReadable(readerGroups, embedder?.modelId ?? null);
    return {
      chunks,
      // As the chunks record it (kept consistent with the index at boot): counting the index's own labels per reader
      // would read every readable chunk's rowid (about 45 ms per 20k chunks).
      vectors: vectors ? chunks - pending : 0,
      dimension: embedder?.dimension ?? null,
      model_id: embedder?.modelId ?? null,
      device: embedder?.device ?? null,
      stale_chunks: pending,
      database_bytes: await fileBytes(this.databaseFile, `${this.databaseFile}-wal`),
      vectors_bytes: vectors?.diskBytes() ?? 0,
      last_rebuild_at: this.pointer?.rebuilt_at ?? null,
    };
  }

  private async readPointer(): Promise<CurrentPointer | null> {
    try {
      return JSON.parse(await readFile(path.join(this.dir, 'current.json'), 'utf8')) as CurrentPointer;
    } catch {
      return null;
    }
  }

  private async writePointer(pointer: CurrentPointer): Promise<void> {
    const file = path.join(this.dir, 'current.json');
    await writeFile(`${file}.tmp`, JSON.stringify(pointer), { mode: 0o600 });
    await rename(`${file}.tmp`, file);
  }

  private async removeFiles(base: string): Promise<void> {
    for (const name of await readdir(this.dir)) if (name.startsWith(base)) await rm(path.join(this.dir, name), { force: true });
  }
}

async function fileBytes(...files: string[]): Promise<number> {
  const sizes = await Promise.all(files.map((file) => stat(file).then((s) => s.size, () => 0)));
  return sizes.reduce((sum, size) => sum + size, 0);
}
