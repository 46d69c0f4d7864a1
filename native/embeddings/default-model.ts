import path from 'node:path';
import { packageFile } from '../../core/package-files.js';
import type { EmbeddingManifest } from '../model-files/index.js';
import { installModel } from './install.js';

/**
 * The embedder that ships with Hearth: MinishLab's potion-base-4M (int8), a pretrained Model2Vec static model
 * (MIT, 4.5 MB, 128 dimensions), installed into MODEL_DIR at first start when no embedding model is there.
 * Chosen over Hearth's WordNet build on the real-collection evaluation (docs/embedders-and-rerankers.md).
 * Its files sit in default-model/ beside this module, with their origin and licence; the copy installed
 * must hash to the pins below, so a tampered or truncated shipped file installs nothing.
 */
export const SHIPPED_EMBEDDER = {
  id: 'potion-base-4M-int8',
  name: 'potion-base-4M (int8), shipped with Hearth',
  licence: 'MIT, (c) 2024 The Minish Lab (distilled from BAAI/bge-base-en-v1.5, MIT)',
  sha256: {
    model: '48003d10a1f686321e4e79f5f306fe1fcf1d2b883a90785c939563a506bb89be',
    tokenizer: '2b450d39e4f10fbced1417d55fd2ba63fe4a7eea561467a06a91c3a4537995c9',
    config: '8487486abedbb5a38ffb907d874304da13860d6a7f6919ba117dcaeabe8c3e82',
  },
} as const;

/** Where the shipped files are: from the sources and from dist/ alike. */
export const shippedEmbedderFolder = () => packageFile('native', 'embeddings', 'default-model', SHIPPED_EMBEDDER.id);

/** Copies the shipped embedder into MODEL_DIR (staged, checked against the pins, loaded once) and, by default, makes it active. */
export function installShippedEmbedder(options: { modelDir: string; activate?: boolean; folder?: string }): Promise<EmbeddingManifest> {
  const folder = options.folder ?? shippedEmbedderFolder();
  const { id, name, licence, sha256 } = SHIPPED_EMBEDDER;
  return installModel({
    modelDir: options.modelDir,
    id,
    format: 'model2vec',
    files: { model: path.join(folder, 'model.safetensors'), tokenizer: path.join(folder, 'tokenizer.json'), config: path.join(folder, 'config.json') },
    source: `shipped:${id}`,
    name,
    licence,
    expectedSha256: sha256,
    activate: options.activate ?? true,
  });
}
