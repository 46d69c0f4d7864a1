import type { Embedder } from '../../native/embeddings/index.js';

/** Texts at the embedder at once: enough that it has the next run waiting when one ends (it batches them across documents). */
const IN_FLIGHT_TEXTS = 32;

interface Waiting {
  owner: string;
  embedder: Embedder;
  texts: string[];
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/**
 * The pipeline's embedding requests, sent in the order they were made (documents in job order, a
 * document's chunks in order) with few texts at the embedder at once, so the document being written
 * is never behind the ones prepared after it, and a cancelled job leaves little work behind.
 */
export class EmbedFeed {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  /** Vectors of `texts`; the promise may never be awaited (its document cancelled), so it never goes unhandled. */
  request(owner: string, embedder: Embedder, texts: string[]): Promise<Float32Array[]> {
    const vectors = new Promise<Float32Array[]>((resolve, reject) => this.waiting.push({ owner, embedder, texts, resolve, reject }));
    vectors.catch(() => undefined);
    this.pump();
    return vectors;
  }

  /** Drops the requests of these documents that were not sent yet. */
  drop(owners: ReadonlySet<string>): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      if (!owners.has(this.waiting[i].owner)) continue;
      const [dropped] = this.waiting.splice(i, 1);
      dropped.reject(new Error('embedding request dropped'));
    }
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.inFlight < IN_FLIGHT_TEXTS) {
      const next = this.waiting.shift()!;
      this.inFlight += next.texts.length;
      void next.embedder
        .embed(next.texts)
        .then(next.resolve, next.reject)
        .then(() => {
          this.inFlight -= next.texts.length;
          this.pump();
        });
    }
  }
}
