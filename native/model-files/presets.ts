import { type EmbeddingFormat, MODEL2VEC_MAX_TOKENS } from './manifest.js';
import type { PinnedFile, PinnedModel } from './pull.js';

/** An embedding model `models pull` knows: its pins, and its token limit (sentence-transformers' own). */
export interface EmbeddingPreset extends PinnedModel {
  /** 'onnx' unless given. */
  format?: EmbeddingFormat;
  maxTokens: number;
  files: { model: PinnedFile; tokenizer: PinnedFile; tokenizer_config?: PinnedFile; config?: PinnedFile };
}

/** A chat model (GGUF) `models pull` knows. */
export type LlmPreset = PinnedModel;

export const DEFAULT_EMBEDDING_PRESET = 'all-MiniLM-L6-v2-int8';

// Pins from ../shared/models/README.md (Xenova packaging of sentence-transformers/all-MiniLM-L6-v2).
const MINILM_REVISION = '48a5a372879ed2ed147ab84836e345977276d9b2';
const MINILM_TOKENIZER = {
  tokenizer: { path: 'tokenizer.json', sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0', size: 711661 },
  tokenizer_config: { path: 'tokenizer_config.json', sha256: '9261e7d79b44c8195c1cada2b453e55b00aeb81e907a6664974b4d7776172ab3', size: 366 },
  config: { path: 'config.json', sha256: '7135149f7cffa1a573466c6e4d8423ed73b62fd2332c575bf738a0d033f70df7', size: 650 },
};
const MINILM = { repo: 'Xenova/all-MiniLM-L6-v2', revision: MINILM_REVISION, licence: 'Apache-2.0', maxTokens: 256 };

// Model2Vec static models (MinishLab, MIT), each at the commit that first published its files (read from the hub's
// pages in the project's stored copies; not fetched from this offline box). The hub shows a sha256 for large files
// only: potion-base-8M's table is pinned by it; the rest, and potion-retrieval-32M's table (no sha256 was found), by
// the commit alone. The first pull on a box with a network is the check: docs/models.md.
const POTION = { format: 'model2vec', licence: 'MIT', maxTokens: MODEL2VEC_MAX_TOKENS } as const;
const byCommit = (file: string) => ({ path: file, sha256: null });

export const EMBEDDING_PRESETS: Readonly<Record<string, EmbeddingPreset>> = Object.freeze({
  'all-MiniLM-L6-v2-int8': {
    ...MINILM,
    id: 'all-MiniLM-L6-v2-int8',
    name: 'all-MiniLM-L6-v2 (int8 quantised ONNX, 384 dimensions)',
    files: { model: { path: 'onnx/model_quantized.onnx', sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1', size: 22972370 }, ...MINILM_TOKENIZER },
  },
  'all-MiniLM-L6-v2-fp32': {
    ...MINILM,
    id: 'all-MiniLM-L6-v2-fp32',
    name: 'all-MiniLM-L6-v2 (fp32 ONNX, 384 dimensions)',
    files: { model: { path: 'onnx/model.onnx', sha256: '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e', size: 90387606 }, ...MINILM_TOKENIZER },
  },
  'potion-base-8M': {
    ...POTION,
    id: 'potion-base-8M',
    name: 'potion-base-8M (Model2Vec static embedder, 256 dimensions)',
    repo: 'minishlab/potion-base-8M',
    revision: 'ad78550e2b7d7f7a39d2abbc81b079aea6c20287',
    files: { model: { path: 'model.safetensors', sha256: 'f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2' }, tokenizer: byCommit('tokenizer.json'), config: byCommit('config.json') },
  },
  'potion-retrieval-32M': {
    ...POTION,
    id: 'potion-retrieval-32M',
    name: 'potion-retrieval-32M (Model2Vec static embedder for retrieval, 512 dimensions)',
    repo: 'minishlab/potion-retrieval-32M',
    revision: '4df227cb5acbda0ada9536ec64621775f5d7efd7',
    files: { model: byCommit('model.safetensors'), tokenizer: byCommit('tokenizer.json'), config: byCommit('config.json') },
  },
});

// Size and sha256 from ../shared/models/README.md. The repo, file name and revision could not be
// checked from this offline box: a different file at that path fails the sha256 pin and is deleted.
export const LLM_PRESETS: Readonly<Record<string, LlmPreset>> = Object.freeze({
  'smollm2-135m-instruct-q8': {
    id: 'smollm2-135m-instruct-q8',
    name: 'SmolLM2-135M-Instruct (Q8_0 GGUF)',
    repo: 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF',
    revision: 'main',
    licence: 'Apache-2.0',
    files: { model: { path: 'smollm2-135m-instruct-q8_0.gguf', sha256: '4090835042df84521a580391915d5cfed516b911e203a1580f1d69aa7a4b9bf8', size: 144811968 } },
  },
});
