/**
 * How texts are batched into ONNX runs: the one place these bounds are tuned. The embedder's thread
 * puts each run together from the requests waiting (embedder-thread.ts); the model on the calling
 * thread splits one call by the same count (onnx-embedder.ts).
 */
export const EMBED_RUN = {
  /** Texts per ONNX run at most. */
  maxTexts: 16,
  /**
   * Padded tokens per ONNX run at most: one chunk of 256 tokens, or several shorter ones. A run's
   * activations grow with batch × longest text (and its attention with the square of that text): a
   * MiniLM-class model needs about 15 MB for 2 texts of 256 tokens, 30 MB for 4 and 180 MB for 16, for
   * the same CPU per text (60-70 ms here at batch 1, 4 or 16). ONNX Runtime's arena keeps the largest
   * run's memory for the life of the service: 256 rather than 512 cut its peak RSS by 13-25 MB.
   */
  maxPaddedTokens: 256,
  /** Rough WordPiece characters per token, to size runs without tokenising twice. */
  charsPerToken: 4,
} as const;

/** Thrown (as a rejection) when a call's signal aborted it. */
export class EmbeddingDropped extends Error {
  constructor() {
    super('embedding request dropped');
    this.name = 'EmbeddingDropped';
  }
}
