import type { EmbeddingFormat } from './manifest.js';
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
