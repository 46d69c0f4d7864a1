/**
 * A sentence embedder: text in, one normalised vector per text out. The rest of the code sees only
 * this interface; onnxruntime-node and the tokenizer stay inside native/embeddings.
 */
export interface Embedder {
  /** Stable identity of the model (manifest id + sha256 prefix): chunks record which model embedded them. */
  readonly modelId: string;
  readonly dimension: number;
  /** Longest input in tokens (the model's own limit); longer texts are truncated. */
  readonly maxTokens: number;
  /** 'cpu' or 'cuda': where it actually runs. */
  readonly device: 'cpu' | 'cuda';
  /**
   * Whether a text's vector is the mean of fixed token rows (Model2Vec, Hearth's WordNet table): a word's own vector
   * then costs a table lookup and means the same wherever the word stands, so search may compare words one by one
   * (plugins/retrieval/soft-match.ts). False for a transformer, whose words take their sense from their neighbours.
   */
  readonly tokenTable: boolean;
  /**
   * Of a token table adapted to the collection (plugins/search-index/corpus-adaptation), the leading dimensions that
   * are the model's own rows; the rest say which words go together in this collection. Absent: all of them.
   * Quoting, which compares a passage's sentences with the question, reads only these (lexicalView).
   */
  readonly lexicalDimensions?: number;
  /**
   * Embeds texts; vectors are L2-normalised, so cosine similarity is a dot product. Callers pass what
   * they have: the embedder batches the texts (across calls) within its memory bounds (batching.ts).
   */
  embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Tokens of a text by the model's own tokenizer (special tokens excluded): chunk bounds use it. */
  countTokens(text: string): number;
  close(): Promise<void>;
}

export interface EmbedOptions {
  /**
   * 'query': someone waits on it (a search), so it runs before bulk work, after one run at most.
   * 'bulk' (the default): chunks being indexed, embedded in the order they were asked for.
   */
  priority?: 'query' | 'bulk';
  /** Aborting drops the texts not embedded yet, and the call rejects (a cancelled or forgotten document). */
  signal?: AbortSignal;
}
