import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Embedder } from './embedder.js';
import { ACTIVE_FILE, embeddingsRoot, hashModelFiles, modelFolder, readManifest, type ModelManifest } from './manifest.js';
import { OnnxEmbedder, type EmbedDevice, type EmbedLog } from './onnx-embedder.js';

export interface InstalledModel {
  id: string;
  folder: string;
  manifest: ModelManifest;
}

export interface ModelProblem {
  folder: string;
  error: string;
}

/** Every folder under `${modelDir}/embeddings/` with a readable manifest; broken ones are reported, not thrown. */
export async function listInstalledModels(modelDir: string): Promise<{ models: InstalledModel[]; problems: ModelProblem[] }> {
  const root = embeddingsRoot(modelDir);
  const models: InstalledModel[] = [];
  const problems: ModelProblem[] = [];
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { models, problems };
    throw err;
  }
  for (const entry of entries) {
    // Dot folders are install staging areas, never models.
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const folder = path.join(root, entry.name);
    try {
      const manifest = await readManifest(folder);
      if (manifest.id !== entry.name) throw new Error(`manifest id "${manifest.id}" does not match its folder`);
      models.push({ id: manifest.id, folder, manifest });
    } catch (err) {
      problems.push({ folder, error: (err as Error).message });
    }
  }
  models.sort((a, b) => a.id.localeCompare(b.id));
  return { models, problems };
}

export async function readActiveModelId(modelDir: string): Promise<string | null> {
  try {
    const id = (await readFile(path.join(embeddingsRoot(modelDir), ACTIVE_FILE), 'utf8')).trim();
    return id || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** ACTIVE names the model; without it, the only or most recently installed one. Null when none. */
export async function resolveActiveModel(modelDir: string): Promise<InstalledModel | null> {
  const active = await readActiveModelId(modelDir);
  if (active) {
    const folder = modelFolder(modelDir, active);
    try {
      return { id: active, folder, manifest: await readManifest(folder) };
    } catch (err) {
      throw new Error(`${path.join(embeddingsRoot(modelDir), ACTIVE_FILE)} names "${active}", which is not usable: ${(err as Error).message}`);
    }
  }
  const { models } = await listInstalledModels(modelDir);
  if (!models.length) return null;
  return models.reduce((newest, m) => (m.manifest.installed_at > newest.manifest.installed_at ? m : newest));
}

/** Refuses a model whose files differ from the sha256 recorded in its manifest. */
export async function verifyModelFiles(model: InstalledModel): Promise<void> {
  const actual = await hashModelFiles(model.folder, model.manifest.files).catch((err: Error) => {
    throw new Error(`embedding model "${model.id}" is incomplete: ${err.message}`);
  });
  for (const [name, expected] of Object.entries(model.manifest.sha256)) {
    if (name in actual && actual[name] !== expected) {
      throw new Error(
        `embedding model "${model.id}" refused: ${name} has sha256 ${actual[name]} but its manifest pins ${expected} (file changed or corrupted; re-import or re-pull it)`,
      );
    }
  }
}

/** Manifest id plus model sha256 prefix: chunks record which exact weights embedded them. */
export function embedderModelId(manifest: ModelManifest): string {
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

/** The active embedder, or null when no embedding model is installed (search then runs on keywords). */
export async function loadEmbedder(options: LoadEmbedderOptions): Promise<Embedder | null> {
  const model = options.id
    ? { id: options.id, folder: modelFolder(options.modelDir, options.id), manifest: await readManifest(modelFolder(options.modelDir, options.id)) }
    : await resolveActiveModel(options.modelDir);
  if (!model) return null;
  await verifyModelFiles(model);
  const { manifest, folder } = model;
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
