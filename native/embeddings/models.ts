import path from 'node:path';
import { modelFolder, readManifest, resolveActiveModel, verifyModelFiles, type EmbeddingManifest } from '../model-files/index.js';
import type { Embedder } from './embedder.js';
import { Model2VecEmbedder } from './model2vec.js';
import { OnnxEmbedder, type EmbedDevice, type EmbedLog } from './onnx-embedder.js';

/** Manifest id plus model sha256 prefix: chunks record which exact weights embedded them. */
export function embedderModelId(manifest: EmbeddingManifest): string {
  return `${manifest.id}@${manifest.sha256[manifest.files.model].slice(0, 12)}`;
}

export interface LoadEmbedderOptions {
  modelDir: string;
  device: EmbedDevice;
  log?: EmbedLog;
  threads?: number;
  batchSize?: number;
  /** A specific installed model instead of the active one. */
  id?: string;
}

/** The active embedder on the calling thread, or null when no embedding model is installed (search then runs on keywords). */
export async function loadEmbedder(options: LoadEmbedderOptions): Promise<Embedder | null> {
  const model = options.id
    ? { id: options.id, folder: modelFolder(options.modelDir, 'embedding', options.id), manifest: await readManifest(modelFolder(options.modelDir, 'embedding', options.id), 'embedding') }
    : await resolveActiveModel(options.modelDir, 'embedding');
  if (!model) return null;
  await verifyModelFiles(model);
  const { manifest, folder } = model;
  if (manifest.format === 'model2vec') {
    return Model2VecEmbedder.create({
      tablePath: path.join(folder, manifest.files.model),
      tokenizerPath: path.join(folder, manifest.files.tokenizer),
      modelId: embedderModelId(manifest),
      maxTokens: manifest.max_tokens,
      dimension: manifest.dimension,
    });
  }
  return OnnxEmbedder.create({
    modelPath: path.join(folder, manifest.files.model),
    tokenizerPath: path.join(folder, manifest.files.tokenizer),
    tokenizerConfigPath: manifest.files.tokenizer_config ? path.join(folder, manifest.files.tokenizer_config) : undefined,
    modelId: embedderModelId(manifest),
    maxTokens: manifest.max_tokens,
    dimension: manifest.dimension,
    normalize: manifest.normalize,
    device: options.device,
    threads: options.threads,
    batchSize: options.batchSize,
    log: options.log,
  });
}
