import { readFile } from 'node:fs/promises';
import type { Tokenizer } from '@huggingface/tokenizers';
import { EmbeddingDropped } from './batching.js';
import type { EmbedOptions, Embedder } from './embedder.js';
import { readTokenizer } from './onnx-embedder.js';
import { readTokenTable, type TokenTable } from './safetensors.js';
import { MODEL2VEC_MAX_TOKENS } from '../model-files/index.js';

/** The tensor Model2Vec writes its token table under. */
const TABLE_TENSOR = 'embeddings';
/** The safetensors metadata key of a table adapted to the collection: how many leading dimensions are the model's own. */
export const LEXICAL_DIMENSIONS = 'hearth_lexical_dimensions';
/** A text this many characters per token past the limit is cut at whitespace before tokenising. */
const LONG_TEXT_CHARS_PER_TOKEN = 8;

export interface Model2VecOptions {
  tablePath: string;
  tokenizerPath: string;
  /** Reported as Embedder.modelId. */
  modelId: string;
  maxTokens?: number;
  /** Expected output size (the manifest's); checked at load when given. */
  dimension?: number;
}

/**
 * A Model2Vec static embedder: a text's vector is the mean of its tokens' rows in the table (no special
 * tokens, the unknown token dropped), L2-normalised as every Hearth embedder's is. Pure arithmetic on
 * the calling thread; in the service it runs in the embedder thread like the ONNX models.
 */
export class Model2VecEmbedder implements Embedder {
  readonly device = 'cpu' as const;
  readonly tokenTable = true;
  readonly lexicalDimensions?: number;
  readonly maxTokens: number;
  readonly modelId: string;

  private constructor(
    private readonly table: TokenTable,
    private readonly tokenizer: Tokenizer,
    private readonly unknownId: number | undefined,
    opts: Model2VecOptions,
  ) {
    this.modelId = opts.modelId;
    this.maxTokens = opts.maxTokens ?? MODEL2VEC_MAX_TOKENS;
    const lexical = Number(table.metadata[LEXICAL_DIMENSIONS]);
    if (Number.isInteger(lexical) && lexical > 0 && lexical < table.dimension) this.lexicalDimensions = lexical;
  }

  static async create(opts: Model2VecOptions): Promise<Model2VecEmbedder> {
    const table = readTokenTable(await readFile(opts.tablePath), TABLE_TENSOR);
    const { tokenizer } = await readTokenizer(opts.tokenizerPath);
    let largestId = -1;
    for (const id of tokenizer.get_vocab(true).values()) largestId = Math.max(largestId, id);
    if (largestId >= table.rows) throw new Error(`the tokenizer's ids reach ${largestId} but the table has only ${table.rows} rows`);
    if (opts.dimension !== undefined && opts.dimension !== table.dimension) {
      throw new Error(`embedding model ${opts.modelId} has ${table.dimension} dimensions but its manifest says ${opts.dimension}`);
    }
    const unknown = unknownToken(JSON.parse(await readFile(opts.tokenizerPath, 'utf8')));
    return new Model2VecEmbedder(table, tokenizer, unknown === undefined ? undefined : (tokenizer.token_to_id(unknown) ?? undefined), opts);
  }

  get dimension(): number {
    return this.table.dimension;
  }

  countTokens(text: string): number {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }

  async embed(texts: string[], { signal }: EmbedOptions = {}): Promise<Float32Array[]> {
    return texts.map((text) => {
      if (signal?.aborted) throw new EmbeddingDropped();
      return this.embedOne(text);
    });
  }

  async close(): Promise<void> {}

  private tokenIds(text: string): number[] {
    // Tokenising a whole book to keep 512 tokens is wasted work: the leading tokens of a whitespace cut are the same.
    const cutAt = this.maxTokens * LONG_TEXT_CHARS_PER_TOKEN;
    let source = text;
    if (text.length > cutAt) {
      const space = text.lastIndexOf(' ', cutAt);
      if (space > 0) source = text.slice(0, space);
    }
    const ids = this.tokenizer.encode(source, { add_special_tokens: false }).ids;
    return ids.filter((id: number) => id !== this.unknownId).slice(0, this.maxTokens);
  }

  private embedOne(text: string): Float32Array {
    const { dimension, data } = this.table;
    const vector = new Float32Array(dimension);
    for (const id of this.tokenIds(text)) {
      const row = id * dimension;
      for (let h = 0; h < dimension; h++) vector[h] += data[row + h];
    }
    // The mean's 1/n and int8's global scale both cancel in the normalisation.
    let norm = 0;
    for (let h = 0; h < dimension; h++) norm += vector[h] * vector[h];
    norm = Math.sqrt(norm) || 1;
    for (let h = 0; h < dimension; h++) vector[h] /= norm;
    return vector;
  }
}

/** tokenizer.json's model.unk_token (WordPiece, BPE and Unigram all name it there). */
function unknownToken(tokenizerJson: { model?: { unk_token?: unknown } }): string | undefined {
  const token = tokenizerJson.model?.unk_token;
  return typeof token === 'string' ? token : undefined;
}
