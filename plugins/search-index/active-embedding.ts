import type { Embedder } from '../../native/embeddings/index.js';
import type { VectorIndex } from '../../native/vector-index/index.js';

/**
 * The embedder and vector index in force. Both may be absent (no model installed): search then
 * runs on keywords alone. Swapping them (a new model, a finished rebuild) is one assignment,
 * so a search in flight keeps the pair it started with.
 */
export class ActiveEmbedding {
  private current: { embedder: Embedder; vectors: VectorIndex } | null = null;

  embedder(): Embedder | null {
    return this.current?.embedder ?? null;
  }

  vectors(): VectorIndex | null {
    return this.current?.vectors ?? null;
  }

  /** Puts a matching embedder and index in force and returns the pair it replaced. */
  swap(next: { embedder: Embedder; vectors: VectorIndex } | null): { embedder: Embedder; vectors: VectorIndex } | null {
    if (next && next.embedder.modelId !== next.vectors.modelId) throw new Error('the vector index belongs to another embedding model');
    const previous = this.current;
    this.current = next;
    return previous;
  }
}
