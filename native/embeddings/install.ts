import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { MODEL2VEC_MAX_TOKENS, installModelFiles, pullPinnedFiles, readManifest, type EmbeddingFormat, type EmbeddingManifest, type EmbeddingPreset, type PullOptions } from '../model-files/index.js';
import { Model2VecEmbedder } from './model2vec.js';
import { OnnxEmbedder } from './onnx-embedder.js';

/** Absolute paths of the files that make an embedding model; they are copied under fixed names. */
interface ModelSourceFiles {
  model: string;
  tokenizer: string;
  tokenizer_config?: string;
  config?: string;
}

interface InstallModelOptions {
  modelDir: string;
  id: string;
  /** 'onnx' unless given. */
  format?: EmbeddingFormat;
  files: ModelSourceFiles;
  source: string;
  name?: string;
  licence?: string;
  /** How a built model was made: recorded in the manifest. */
  method?: string;
  /** Token limit; read from the source folder's configs when not given. */
  maxTokens?: number;
  /** sha256 each source file must have (by key of `files`): checked on the copies. */
  expectedSha256?: Partial<Record<keyof ModelSourceFiles, string>>;
  activate?: boolean;
}

const TARGET_NAMES: Record<keyof ModelSourceFiles, string> = {
  model: 'model.onnx',
  tokenizer: 'tokenizer.json',
  tokenizer_config: 'tokenizer_config.json',
  config: 'config.json',
};
/** The model file's name inside the model folder, per format. */
const MODEL_FILE_NAMES: Record<EmbeddingFormat, string> = { onnx: 'model.onnx', model2vec: 'model.safetensors' };
/** Files the embedder loads; config.json is kept and pinned, not loaded. */
const LOADED = ['model', 'tokenizer', 'tokenizer_config'] as const;

async function readJson(file: string | undefined): Promise<Record<string, unknown>> {
  if (!file) return {};
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return {};
  }
}

/** sentence-transformers' own limit first (all-MiniLM-L6-v2: 256, though its tokenizer says 512). */
async function inferMaxTokens(files: ModelSourceFiles): Promise<number> {
  const dir = path.dirname(files.tokenizer);
  const sbert = await readJson(path.join(dir, 'sentence_bert_config.json'));
  const tokCfg = await readJson(files.tokenizer_config);
  const cfg = await readJson(files.config);
  for (const v of [sbert.max_seq_length, tokCfg.model_max_length, cfg.max_position_embeddings]) {
    if (typeof v === 'number' && Number.isInteger(v) && v >= 8 && v <= 8192) return v;
  }
  return 512;
}

/** Loads the staged copy as the service will: a model that does not load is refused, and its dimension is read. */
async function probeDimension(staging: string, id: string, format: EmbeddingFormat, maxTokens: number, hasTokenizerConfig: boolean): Promise<number> {
  const tokenizerPath = path.join(staging, TARGET_NAMES.tokenizer);
  const probe =
    format === 'model2vec'
      ? await Model2VecEmbedder.create({ tablePath: path.join(staging, MODEL_FILE_NAMES.model2vec), tokenizerPath, modelId: id, maxTokens })
      : await OnnxEmbedder.create({
          modelPath: path.join(staging, MODEL_FILE_NAMES.onnx),
          tokenizerPath,
          tokenizerConfigPath: hasTokenizerConfig ? path.join(staging, TARGET_NAMES.tokenizer_config) : undefined,
          modelId: id,
          maxTokens,
          device: 'cpu',
        });
  const dimension = probe.dimension;
  await probe.close();
  return dimension;
}

/**
 * Installs an embedding model under `${modelDir}/embeddings/<id>/` through model-files (staged copy,
 * sha256, manifest, ACTIVE), once ONNX Runtime has loaded the copy and reported its dimension.
 */
export async function installModel(opts: InstallModelOptions): Promise<EmbeddingManifest> {
  const format = opts.format ?? 'onnx';
  const names = { ...TARGET_NAMES, model: MODEL_FILE_NAMES[format] };
  const files = Object.fromEntries(
    (Object.keys(names) as (keyof ModelSourceFiles)[]).map((role) => [role, opts.files[role] ? { from: opts.files[role], to: names[role] } : undefined]),
  );
  const maxTokens = opts.maxTokens ?? (format === 'model2vec' ? MODEL2VEC_MAX_TOKENS : await inferMaxTokens(opts.files));
  return installModelFiles({
    modelDir: opts.modelDir,
    kind: 'embedding',
    id: opts.id,
    files,
    listed: LOADED,
    expectedSha256: opts.expectedSha256,
    source: opts.source,
    name: opts.name,
    licence: opts.licence,
    method: opts.method,
    activate: opts.activate,
    inspect: async (staging) => ({
      ...(format === 'onnx' ? {} : { format }),
      dimension: await probeDimension(staging, opts.id, format, maxTokens, !!opts.files.tokenizer_config),
      max_tokens: maxTokens,
      pooling: 'mean',
      normalize: true,
    }),
  });
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then((s) => s.isFile(), () => false);
}

/** Finds model.onnx, or onnx/model.onnx, or the single onnx/model*.onnx in an exported folder. */
async function findModelFile(dir: string, preferred?: string): Promise<string> {
  if (preferred) {
    const file = path.resolve(dir, preferred);
    if (!(await exists(file))) throw new Error(`${file} not found`);
    return file;
  }
  for (const candidate of ['model.onnx', 'onnx/model.onnx']) if (await exists(path.join(dir, candidate))) return path.join(dir, candidate);
  const onnxDir = path.join(dir, 'onnx');
  const found = (await readdir(onnxDir).catch(() => [] as string[])).filter((f) => /^model.*\.onnx$/.test(f));
  if (found.length === 1) return path.join(onnxDir, found[0]);
  if (found.length > 1) throw new Error(`several models in ${onnxDir} (${found.join(', ')}): choose one with --file onnx/NAME`);
  throw new Error(`no model.onnx or onnx/model*.onnx in ${dir}`);
}

interface ImportOptions {
  modelDir: string;
  id?: string;
  name?: string;
  licence?: string;
  maxTokens?: number;
  /** Path of the .onnx file inside the folder when there are several. */
  modelFile?: string;
  activate?: boolean;
}

/**
 * A Model2Vec folder: model.safetensors and a config.json that says model2vec (or no ONNX model beside
 * the table). Its config's `normalize` needs nothing: Hearth normalises every embedder's vectors.
 */
async function isModel2VecFolder(dir: string, preferred?: string): Promise<boolean> {
  if (preferred) return preferred.endsWith('.safetensors');
  if (!(await exists(path.join(dir, MODEL_FILE_NAMES.model2vec)))) return false;
  const config = await readJson(path.join(dir, 'config.json'));
  if (config.model_type === 'model2vec') return true;
  return !(await findModelFile(dir).then(() => true, () => false));
}

/** Imports an exported model folder (USB stick, copied hub snapshot, another Hearth's model folder). */
export async function importModelFolder(dir: string, opts: ImportOptions): Promise<EmbeddingManifest> {
  const src = path.resolve(dir);
  const format: EmbeddingFormat = (await isModel2VecFolder(src, opts.modelFile)) ? 'model2vec' : 'onnx';
  const model = format === 'model2vec' ? path.resolve(src, opts.modelFile ?? MODEL_FILE_NAMES.model2vec) : await findModelFile(src, opts.modelFile);
  if (!(await exists(model))) throw new Error(`${model} not found`);
  const tokenizer = path.join(src, 'tokenizer.json');
  if (!(await exists(tokenizer))) throw new Error(`no tokenizer.json in ${src}`);
  const tokenizerConfig = path.join(src, 'tokenizer_config.json');
  const config = path.join(src, 'config.json');
  const files: ModelSourceFiles = {
    model,
    tokenizer,
    tokenizer_config: (await exists(tokenizerConfig)) ? tokenizerConfig : undefined,
    config: (await exists(config)) ? config : undefined,
  };
  // A folder exported by Hearth carries its manifest: its pins must still hold after the copy.
  let expectedSha256: InstallModelOptions['expectedSha256'];
  let carried: EmbeddingManifest | undefined;
  if (await exists(path.join(src, 'manifest.json'))) {
    carried = await readManifest(src, 'embedding');
    const pin = (name: string | undefined) => (name ? carried!.sha256[name] : undefined);
    expectedSha256 = { model: pin(carried.files.model), tokenizer: pin(carried.files.tokenizer), tokenizer_config: pin(carried.files.tokenizer_config) };
    if (path.resolve(src, carried.files.model) !== model) throw new Error(`${src}/manifest.json names ${carried.files.model}, not ${path.relative(src, model)}`);
  }
  const id = opts.id ?? carried?.id ?? path.basename(src).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return installModel({
    modelDir: opts.modelDir,
    id,
    format,
    files,
    source: `import:${src}`,
    name: opts.name ?? carried?.name,
    licence: opts.licence ?? carried?.licence,
    maxTokens: opts.maxTokens ?? carried?.max_tokens,
    expectedSha256,
    activate: opts.activate,
  });
}

/** Fetches a preset by its pins (model-files), then installs it like an import. Nothing is left on failure. */
export async function pullModel(opts: PullOptions & { preset: EmbeddingPreset }): Promise<EmbeddingManifest> {
  const { preset } = opts;
  return pullPinnedFiles('embedding', preset, opts, (local, source) =>
    installModel({
      modelDir: opts.modelDir,
      id: preset.id,
      format: preset.format,
      files: local as unknown as ModelSourceFiles,
      source,
      name: preset.name,
      licence: preset.licence,
      maxTokens: preset.maxTokens,
      expectedSha256: Object.fromEntries(Object.entries(preset.files).map(([role, pin]) => [role, pin?.sha256 ?? undefined])),
      activate: opts.activate,
    }),
  );
}
