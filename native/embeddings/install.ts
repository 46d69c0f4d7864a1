import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { copyFileOwnerOnly } from '../../core/owner-only.js';
import { embeddingsRoot, hashModelFiles, modelFolder, MODEL_ID_PATTERN, moveIntoPlace, readManifest, setActiveModel, sha256File, writeManifest, type ModelManifest } from './manifest.js';
import { OnnxEmbedder } from './onnx-embedder.js';

/** Absolute paths of the files that make a model; they are copied under fixed names. */
export interface ModelSourceFiles {
  model: string;
  tokenizer: string;
  tokenizer_config?: string;
  config?: string;
}

export interface InstallModelOptions {
  modelDir: string;
  id: string;
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

/**
 * Copies a model into a staging folder, hashes it, probes it with ONNX Runtime for its dimension,
 * writes the manifest, then renames it into `${modelDir}/embeddings/<id>/` (replacing an older copy).
 */
export async function installModel(opts: InstallModelOptions): Promise<ModelManifest> {
  if (!MODEL_ID_PATTERN.test(opts.id)) throw new Error(`invalid model id "${opts.id}" (letters, digits, . _ - only)`);
  const root = embeddingsRoot(opts.modelDir);
  const staging = path.join(root, `.staging-${opts.id}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  try {
    const files: ModelManifest['files'] = { model: TARGET_NAMES.model, tokenizer: TARGET_NAMES.tokenizer };
    for (const key of Object.keys(TARGET_NAMES) as (keyof ModelSourceFiles)[]) {
      const from = opts.files[key];
      if (!from) continue;
      await copyFileOwnerOnly(from, path.join(staging, TARGET_NAMES[key]));
      if (key === 'tokenizer_config') files.tokenizer_config = TARGET_NAMES.tokenizer_config;
    }
    const sha256 = await hashModelFiles(staging, files);
    if (opts.files.config) sha256[TARGET_NAMES.config] = await sha256File(path.join(staging, TARGET_NAMES.config));
    for (const [key, expected] of Object.entries(opts.expectedSha256 ?? {})) {
      const actual = sha256[TARGET_NAMES[key as keyof ModelSourceFiles]];
      if (expected && actual !== expected.toLowerCase()) throw new Error(`${opts.files[key as keyof ModelSourceFiles]}: sha256 ${actual} does not match the expected ${expected}`);
    }
    const maxTokens = opts.maxTokens ?? (await inferMaxTokens(opts.files));
    const probe = await OnnxEmbedder.create({
      modelPath: path.join(staging, files.model),
      tokenizerPath: path.join(staging, files.tokenizer),
      tokenizerConfigPath: files.tokenizer_config ? path.join(staging, files.tokenizer_config) : undefined,
      modelId: opts.id,
      maxTokens,
      device: 'cpu',
    });
    const dimension = probe.dimension;
    await probe.close();
    const manifest: ModelManifest = {
      id: opts.id,
      name: opts.name ?? opts.id,
      kind: 'embedding',
      files,
      sha256,
      dimension,
      max_tokens: maxTokens,
      pooling: 'mean',
      normalize: true,
      source: opts.source,
      licence: opts.licence ?? 'unknown (not stated by the source)',
      ...(opts.method ? { method: opts.method } : {}),
      installed_at: new Date().toISOString(),
    };
    await writeManifest(staging, manifest);
    await moveIntoPlace(staging, modelFolder(opts.modelDir, opts.id));
    if (opts.activate ?? true) await setActiveModel(opts.modelDir, opts.id);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then((s) => s.isFile(), () => false);
}

/** Finds model.onnx, or onnx/model.onnx, or the single onnx/model*.onnx in an exported folder. */
export async function findModelFile(dir: string, preferred?: string): Promise<string> {
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

export interface ImportOptions {
  modelDir: string;
  id?: string;
  name?: string;
  licence?: string;
  maxTokens?: number;
  /** Path of the .onnx file inside the folder when there are several. */
  modelFile?: string;
  activate?: boolean;
}

/** Imports an exported model folder (USB stick, copied hub snapshot, another Hearth's model folder). */
export async function importModelFolder(dir: string, opts: ImportOptions): Promise<ModelManifest> {
  const src = path.resolve(dir);
  const model = await findModelFile(src, opts.modelFile);
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
  let carried: ModelManifest | undefined;
  if (await exists(path.join(src, 'manifest.json'))) {
    carried = await readManifest(src);
    const pin = (name: string | undefined) => (name ? carried!.sha256[name] : undefined);
    expectedSha256 = { model: pin(carried.files.model), tokenizer: pin(carried.files.tokenizer), tokenizer_config: pin(carried.files.tokenizer_config) };
    if (path.resolve(src, carried.files.model) !== model) throw new Error(`${src}/manifest.json names ${carried.files.model}, not ${path.relative(src, model)}`);
  }
  const id = opts.id ?? carried?.id ?? path.basename(src).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return installModel({
    modelDir: opts.modelDir,
    id,
    files,
    source: `import:${src}`,
    name: opts.name ?? carried?.name,
    licence: opts.licence ?? carried?.licence,
    maxTokens: opts.maxTokens ?? carried?.max_tokens,
    expectedSha256,
    activate: opts.activate,
  });
}
