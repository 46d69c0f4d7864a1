import { stat } from 'node:fs/promises';
import path from 'node:path';
import { installModelFiles, modelFolder, readManifest, resolveActiveModel, verifyModelFiles, type RerankerManifest } from '../model-files/index.js';
import { CrossEncoder } from './cross-encoder.js';

const FILES = { model: 'model.onnx', tokenizer: 'tokenizer.json', tokenizer_config: 'tokenizer_config.json' } as const;
/** ms-marco-MiniLM-L-6-v2's own limit. */
const DEFAULT_MAX_TOKENS = 512;

const exists = (file: string) => stat(file).then((s) => s.isFile(), () => false);

/** The cross-encoder's ONNX file in an exported folder: model.onnx or onnx/model.onnx, unless named. */
async function findModel(dir: string, preferred?: string): Promise<string> {
  for (const candidate of preferred ? [preferred] : ['model.onnx', 'onnx/model.onnx']) {
    if (await exists(path.resolve(dir, candidate))) return path.resolve(dir, candidate);
  }
  throw new Error(preferred ? `${path.resolve(dir, preferred)} not found` : `no model.onnx or onnx/model.onnx in ${dir}: choose one with --file`);
}

interface ImportRerankerOptions {
  modelDir: string;
  id?: string;
  name?: string;
  licence?: string;
  maxTokens?: number;
  modelFile?: string;
  activate?: boolean;
}

/**
 * `models import-reranker DIR`: copies a cross-encoder export (ONNX + tokenizer.json, optional
 * tokenizer_config.json) into MODEL_DIR/rerankers/<id>, pinned by sha256, once it has run a probe pair.
 */
export async function importReranker(dir: string, opts: ImportRerankerOptions): Promise<RerankerManifest> {
  const src = path.resolve(dir);
  const model = await findModel(src, opts.modelFile);
  const tokenizer = path.join(src, FILES.tokenizer);
  if (!(await exists(tokenizer))) throw new Error(`no tokenizer.json in ${src}`);
  const tokenizerConfig = path.join(src, FILES.tokenizer_config);
  const hasConfig = await exists(tokenizerConfig);
  const maxTokens = opts.maxTokens ?? DEFAULT_MAX_TOKENS;
  const id = opts.id ?? path.basename(src).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return installModelFiles({
    modelDir: opts.modelDir,
    kind: 'reranker',
    id,
    files: {
      model: { from: model, to: FILES.model },
      tokenizer: { from: tokenizer, to: FILES.tokenizer },
      tokenizer_config: hasConfig ? { from: tokenizerConfig, to: FILES.tokenizer_config } : undefined,
    },
    listed: ['model', 'tokenizer', 'tokenizer_config'],
    source: `import:${src}`,
    name: opts.name,
    licence: opts.licence,
    activate: opts.activate,
    inspect: async (staging) => {
      const probe = await CrossEncoder.create({
        modelPath: path.join(staging, FILES.model),
        tokenizerPath: path.join(staging, FILES.tokenizer),
        tokenizerConfigPath: hasConfig ? path.join(staging, FILES.tokenizer_config) : undefined,
        modelId: id,
        maxTokens,
      });
      await probe.close();
      return { max_tokens: maxTokens };
    },
  });
}

/** The active reranker (or `id`), checked against its pins; null when none is installed (search then skips the stage). */
export async function loadReranker(opts: { modelDir: string; id?: string; threads?: number }): Promise<CrossEncoder | null> {
  const model = opts.id
    ? { id: opts.id, folder: modelFolder(opts.modelDir, 'reranker', opts.id), manifest: await readManifest(modelFolder(opts.modelDir, 'reranker', opts.id), 'reranker') }
    : await resolveActiveModel(opts.modelDir, 'reranker');
  if (!model) return null;
  await verifyModelFiles(model);
  const { manifest, folder } = model;
  return CrossEncoder.create({
    modelPath: path.join(folder, manifest.files.model),
    tokenizerPath: path.join(folder, manifest.files.tokenizer),
    tokenizerConfigPath: manifest.files.tokenizer_config ? path.join(folder, manifest.files.tokenizer_config) : undefined,
    modelId: `${manifest.id}@${manifest.sha256[manifest.files.model].slice(0, 12)}`,
    maxTokens: manifest.max_tokens,
    threads: opts.threads,
  });
}
