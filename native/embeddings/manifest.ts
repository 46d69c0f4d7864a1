import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** manifest.json of an installed embedding model, in `${MODEL_DIR}/embeddings/<id>/`. */
export interface ModelManifest {
  id: string;
  name: string;
  kind: 'embedding';
  /** File names relative to the model folder. */
  files: { model: string; tokenizer: string; tokenizer_config?: string };
  /** sha256 (hex) of every file above, checked at load so a tampered or truncated model is refused. */
  sha256: Record<string, string>;
  dimension: number;
  max_tokens: number;
  pooling: 'mean';
  normalize: true;
  /** Where it came from: 'import:/path', 'pull:<url>', 'built:<builder>'. */
  source: string;
  licence: string;
  /** How a built model was made (the default embedder records its method here). */
  method?: string;
  installed_at: string;
}

export const MANIFEST_FILE = 'manifest.json';
export const ACTIVE_FILE = 'ACTIVE';
/** Model ids become folder names: keep them to a safe alphabet. */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function embeddingsRoot(modelDir: string): string {
  return path.join(modelDir, 'embeddings');
}

export function modelFolder(modelDir: string, id: string): string {
  if (!MODEL_ID_PATTERN.test(id)) throw new Error(`invalid model id "${id}" (letters, digits, . _ - only)`);
  return path.join(embeddingsRoot(modelDir), id);
}

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/** Hashes every file the manifest names (model, tokenizer, tokenizer_config). */
export async function hashModelFiles(folder: string, files: ModelManifest['files']): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of Object.values(files)) if (name) out[name] = await sha256File(path.join(folder, name));
  return out;
}

export function validateManifest(value: unknown, where: string): ModelManifest {
  const m = value as Partial<ModelManifest> | null;
  const bad = (why: string): never => {
    throw new Error(`embedding model manifest ${where}: ${why}`);
  };
  if (!m || typeof m !== 'object') return bad('not a JSON object');
  if (typeof m.id !== 'string' || !MODEL_ID_PATTERN.test(m.id)) bad('missing or invalid id');
  if (m.kind !== 'embedding') bad(`kind must be "embedding"`);
  if (!m.files || typeof m.files.model !== 'string' || typeof m.files.tokenizer !== 'string') bad('files.model and files.tokenizer are required');
  for (const name of Object.values(m.files!)) {
    if (typeof name !== 'string' || name.includes('..') || path.isAbsolute(name)) bad(`file "${String(name)}" must be a relative path inside the model folder`);
    if (!m.sha256 || !/^[0-9a-f]{64}$/.test(m.sha256[name] ?? '')) bad(`no sha256 for ${name}`);
  }
  if (!Number.isInteger(m.dimension) || m.dimension! <= 0) bad('dimension must be a positive integer');
  if (!Number.isInteger(m.max_tokens) || m.max_tokens! < 2) bad('max_tokens must be an integer ≥ 2');
  if (m.pooling !== 'mean') bad('only pooling "mean" is supported');
  return m as ModelManifest;
}

export async function readManifest(folder: string): Promise<ModelManifest> {
  const file = path.join(folder, MANIFEST_FILE);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`embedding model manifest ${file}: ${(err as Error).message}`);
  }
  return validateManifest(json, file);
}

/** Written to a temp file then renamed, so a crash never leaves a half manifest. */
export async function writeManifest(folder: string, manifest: ModelManifest): Promise<void> {
  await mkdir(folder, { recursive: true });
  const tmp = path.join(folder, `${MANIFEST_FILE}.tmp`);
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n');
  await rename(tmp, path.join(folder, MANIFEST_FILE));
}

/** Renames a finished staging folder over the model's folder; an older copy is set aside first, then removed. */
export async function moveIntoPlace(staging: string, target: string): Promise<void> {
  const old = path.join(path.dirname(target), `.old-${path.basename(target)}-${randomBytes(4).toString('hex')}`);
  const hadOld = await stat(target).then(() => true, () => false);
  if (hadOld) await rename(target, old);
  await rename(staging, target);
  if (hadOld) await rm(old, { recursive: true, force: true });
}

export async function setActiveModel(modelDir: string, id: string): Promise<void> {
  modelFolder(modelDir, id);
  const root = embeddingsRoot(modelDir);
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, `${ACTIVE_FILE}.tmp`), id + '\n');
  await rename(path.join(root, `${ACTIVE_FILE}.tmp`), path.join(root, ACTIVE_FILE));
}
