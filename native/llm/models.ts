import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyFileOwnerOnly } from '../../core/owner-only.js';
import { ACTIVE_FILE, MANIFEST_FILE, MODEL_ID_PATTERN, moveIntoPlace, sha256File } from '../embeddings/manifest.js';

/** manifest.json of an installed chat model, in `${MODEL_DIR}/llm/<id>/` next to model.gguf. */
export interface LlmManifest {
  id: string;
  name: string;
  kind: 'llm';
  files: { model: string };
  /** sha256 of model.gguf, checked at every load so a tampered or truncated file is refused. */
  sha256: Record<string, string>;
  bytes: number;
  /** Where it came from: 'import:/path' or 'pull:<url>'. */
  source: string;
  licence: string;
  installed_at: string;
}

export interface InstalledLlm {
  id: string;
  folder: string;
  manifest: LlmManifest;
}

const MODEL_FILE = 'model.gguf';

export function llmRoot(modelDir: string): string {
  return path.join(modelDir, 'llm');
}

export function llmFolder(modelDir: string, id: string): string {
  if (!MODEL_ID_PATTERN.test(id)) throw new Error(`invalid model id "${id}" (letters, digits, . _ - only)`);
  return path.join(llmRoot(modelDir), id);
}

export async function readLlmManifest(folder: string): Promise<LlmManifest> {
  const file = path.join(folder, MANIFEST_FILE);
  let m: Partial<LlmManifest>;
  try {
    m = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`chat model manifest ${file}: ${(err as Error).message}`);
  }
  const name = m?.files?.model;
  if (m?.kind !== 'llm' || typeof m.id !== 'string' || !MODEL_ID_PATTERN.test(m.id)) throw new Error(`chat model manifest ${file}: not a chat model manifest`);
  if (typeof name !== 'string' || name.includes('..') || path.isAbsolute(name)) throw new Error(`chat model manifest ${file}: files.model must be a relative path`);
  if (!/^[0-9a-f]{64}$/.test(m.sha256?.[name] ?? '')) throw new Error(`chat model manifest ${file}: no sha256 for ${name}`);
  return m as LlmManifest;
}

async function listInstalledLlms(modelDir: string): Promise<InstalledLlm[]> {
  const entries = await readdir(llmRoot(modelDir), { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const models: InstalledLlm[] = [];
  // Dot folders are install staging areas; a folder without a readable manifest is not a model.
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const folder = path.join(llmRoot(modelDir), entry.name);
    const manifest = await readLlmManifest(folder).catch(() => null);
    if (manifest?.id === entry.name) models.push({ id: manifest.id, folder, manifest });
  }
  return models;
}

/** ACTIVE names the model; without it, the only (or most recently installed) one. Null when none. */
export async function resolveActiveLlm(modelDir: string): Promise<InstalledLlm | null> {
  const activeFile = path.join(llmRoot(modelDir), ACTIVE_FILE);
  const active = (await readFile(activeFile, 'utf8').catch(() => '')).trim();
  if (active) {
    const folder = llmFolder(modelDir, active);
    const manifest = await readLlmManifest(folder).catch((err: Error) => {
      throw new Error(`${activeFile} names "${active}", which is not usable: ${err.message}`);
    });
    return { id: active, folder, manifest };
  }
  const models = await listInstalledLlms(modelDir);
  if (!models.length) return null;
  return models.reduce((newest, m) => (m.manifest.installed_at > newest.manifest.installed_at ? m : newest));
}

/** Refuses a GGUF whose sha256 differs from its manifest (hashing ~150 MB takes well under a second). */
export async function verifyLlm(model: InstalledLlm): Promise<string> {
  const file = path.join(model.folder, model.manifest.files.model);
  const expected = model.manifest.sha256[model.manifest.files.model];
  const actual = await sha256File(file).catch((err: Error) => {
    throw new Error(`chat model "${model.id}" is incomplete: ${err.message}`);
  });
  if (actual !== expected) throw new Error(`chat model "${model.id}" refused: ${model.manifest.files.model} has sha256 ${actual} but its manifest pins ${expected} (file changed or corrupted; re-import or re-pull it)`);
  return file;
}

export async function setActiveLlm(modelDir: string, id: string): Promise<void> {
  await readLlmManifest(llmFolder(modelDir, id));
  const root = llmRoot(modelDir);
  await writeFile(path.join(root, `${ACTIVE_FILE}.tmp`), id + '\n');
  await rename(path.join(root, `${ACTIVE_FILE}.tmp`), path.join(root, ACTIVE_FILE));
}

/** A GGUF file starts with the ASCII magic "GGUF": catches a wrong file before it is copied in. */
async function assertGguf(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
    if (bytesRead < 4 || buffer.toString('latin1') !== 'GGUF') throw new Error(`${file} is not a GGUF model file`);
  } finally {
    await handle.close();
  }
}

export interface InstallLlmOptions {
  modelDir: string;
  file: string;
  id: string;
  source: string;
  name?: string;
  licence?: string;
  expectedSha256?: string;
  activate?: boolean;
}

/** Copies a GGUF into a staging folder, hashes it, writes the manifest, then renames it into place. */
export async function installLlm(opts: InstallLlmOptions): Promise<LlmManifest> {
  const target = llmFolder(opts.modelDir, opts.id);
  await assertGguf(opts.file);
  const root = llmRoot(opts.modelDir);
  const staging = path.join(root, `.staging-${opts.id}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  try {
    await copyFileOwnerOnly(opts.file, path.join(staging, MODEL_FILE));
    const sha256 = await sha256File(path.join(staging, MODEL_FILE));
    if (opts.expectedSha256 && sha256 !== opts.expectedSha256.toLowerCase()) throw new Error(`${opts.file}: sha256 ${sha256} does not match the expected ${opts.expectedSha256}`);
    const manifest: LlmManifest = {
      id: opts.id,
      name: opts.name ?? opts.id,
      kind: 'llm',
      files: { model: MODEL_FILE },
      sha256: { [MODEL_FILE]: sha256 },
      bytes: (await stat(path.join(staging, MODEL_FILE))).size,
      source: opts.source,
      licence: opts.licence ?? 'unknown (not stated by the source)',
      installed_at: new Date().toISOString(),
    };
    await writeFile(path.join(staging, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
    await moveIntoPlace(staging, target);
    if (opts.activate ?? true) await setActiveLlm(opts.modelDir, opts.id);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** `models import-llm FILE.gguf [--id ID]`: the id defaults to the file name without .gguf. */
export async function importLlm(file: string, opts: { modelDir: string; id?: string; name?: string; licence?: string; activate?: boolean }): Promise<LlmManifest> {
  const src = path.resolve(file);
  const id = opts.id ?? path.basename(src).replace(/\.gguf$/i, '').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return installLlm({ ...opts, file: src, id, source: `import:${src}` });
}
