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
  /** Embeds a batch; vectors are L2-normalised, so cosine similarity is a dot product. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** Tokens of a text by the model's own tokenizer (special tokens excluded): chunk bounds use it. */
  countTokens(text: string): number;
  close(): Promise<void>;
}
