import type { Embedder } from './embedder.js';

const views = new WeakMap<Embedder, Embedder>();

/**
 * The embedder as quoting uses it: for a table adapted to the collection, its vectors cut to the model's own
 * dimensions (Embedder.lexicalDimensions) and normalised again, under a model id of their own (word caches key on
 * it); any other embedder as it is. The corpus part finds passages of the right topic (search and soft term matching
 * keep it); which of a passage's sentences answers is the model's own rows' to say (measured: quoting with the corpus
 * part picked the answer's sentence less often, docs/retrieval-quality.md, session 28).
 */
export function lexicalView(embedder: Embedder): Embedder {
  const keep = embedder.lexicalDimensions;
  if (!keep || keep >= embedder.dimension) return embedder;
  let view = views.get(embedder);
  if (!view) {
    view = {
      modelId: `${embedder.modelId}#lexical`,
      dimension: keep,
      maxTokens: embedder.maxTokens,
      device: embedder.device,
      tokenTable: embedder.tokenTable,
      countTokens: (text) => embedder.countTokens(text),
      close: async () => {},
      embed: async (texts, options) => (await embedder.embed(texts, options)).map((vector) => normalised(vector.subarray(0, keep))),
    };
    views.set(embedder, view);
  }
  return view;
}

function normalised(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  return Float32Array.from(vector, (x) => x / norm);
}
