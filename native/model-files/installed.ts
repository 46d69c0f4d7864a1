import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertModelId, MODEL_KINDS, readManifest, type ModelKind, type ModelManifest } from './manifest.js';

/** Names the active model of a kind: `${MODEL_DIR}/<kind folder>/ACTIVE`. */
const ACTIVE_FILE = 'ACTIVE';

interface InstalledModel<K extends ModelKind = ModelKind> {
  id: string;
  folder: string;
  manifest: ModelManifest<K>;
}

interface ModelProblem {
  folder: string;
  error: string;
}

/** `${modelDir}/embeddings` or `${modelDir}/llm`. */
export function modelsRoot(modelDir: string, kind: ModelKind): string {
  return path.join(modelDir, MODEL_KINDS[kind].folder);
}

export function modelFolder(modelDir: string, kind: ModelKind, id: string): string {
  assertModelId(id);
  return path.join(modelsRoot(modelDir, kind), id);
}

/** Every folder of a kind with a readable manifest, by id; broken ones are reported, not thrown. */
export async function listInstalledModels<K extends ModelKind>(modelDir: string, kind: K): Promise<{ models: InstalledModel<K>[]; problems: ModelProblem[] }> {
  const root = modelsRoot(modelDir, kind);
  const models: InstalledModel<K>[] = [];
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
      const manifest = await readManifest(folder, kind);
      if (manifest.id !== entry.name) throw new Error(`manifest id "${manifest.id}" does not match its folder`);
      models.push({ id: manifest.id, folder, manifest });
    } catch (err) {
      problems.push({ folder, error: (err as Error).message });
    }
  }
  models.sort((a, b) => a.id.localeCompare(b.id));
  return { models, problems };
}

export async function readActiveModelId(modelDir: string, kind: ModelKind): Promise<string | null> {
  try {
    const id = (await readFile(path.join(modelsRoot(modelDir, kind), ACTIVE_FILE), 'utf8')).trim();
    return id || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** ACTIVE names the model; without it, the only or most recently installed one. Null when none. */
export async function resolveActiveModel<K extends ModelKind>(modelDir: string, kind: K): Promise<InstalledModel<K> | null> {
  const active = await readActiveModelId(modelDir, kind);
  if (active) {
    const folder = modelFolder(modelDir, kind, active);
    try {
      return { id: active, folder, manifest: await readManifest(folder, kind) };
    } catch (err) {
      throw new Error(`${path.join(modelsRoot(modelDir, kind), ACTIVE_FILE)} names "${active}", which is not usable: ${(err as Error).message}`);
    }
  }
  const { models } = await listInstalledModels(modelDir, kind);
  if (!models.length) return null;
  return models.reduce((newest, m) => (m.manifest.installed_at > newest.manifest.installed_at ? m : newest));
}

/** Points ACTIVE at an installed model (its manifest must read), written atomically. */
export async function setActiveModel(modelDir: string, kind: ModelKind, id: string): Promise<void> {
  await readManifest(modelFolder(modelDir, kind, id), kind);
  const root = modelsRoot(modelDir, kind);
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, `${ACTIVE_FILE}.tmp`), id + '\n');
  await rename(path.join(root, `${ACTIVE_FILE}.tmp`), path.join(root, ACTIVE_FILE));
}
