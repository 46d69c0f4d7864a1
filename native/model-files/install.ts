import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { copyFileOwnerOnly } from '../../core/owner-only.js';
import { sha256File } from './checksums.js';
import { setActiveModel, modelFolder, modelsRoot } from './installed.js';
import { assertModelId, writeManifest, type ModelKind, type ModelManifest } from './manifest.js';

/** A file of the model: where it is now, and its name inside the model folder. */
interface SourceFile {
  from: string;
  to: string;
}

/** The facts of a manifest that only its kind knows (dimension, max_tokens, bytes...), read from the staged copy. */
type KindFacts<K extends ModelKind> = Omit<ModelManifest<K>, 'id' | 'name' | 'kind' | 'files' | 'sha256' | 'source' | 'licence' | 'method' | 'installed_at'>;

interface InstallFilesOptions<K extends ModelKind> {
  modelDir: string;
  kind: K;
  id: string;
  /** Files by role (model, tokenizer...): the manifest's `files` lists the roles in `listed`. */
  files: Record<string, SourceFile | undefined>;
  /** Roles named in the manifest's `files`; the others are copied and hashed, not loaded. */
  listed: readonly string[];
  /** sha256 each source file must have (by role): checked on the copies. */
  expectedSha256?: Partial<Record<string, string>>;
  source: string;
  name?: string;
  licence?: string;
  /** How a built model was made: recorded in the manifest. */
  method?: string;
  /** Checks the staged copy (it loads, it has the right magic) and reads the kind's facts from it. */
  inspect: (staging: string) => Promise<KindFacts<K>>;
  activate?: boolean;
}

/** Renames a finished staging folder over the model's folder; an older copy is set aside first, then removed. */
async function moveIntoPlace(staging: string, target: string): Promise<void> {
  const old = path.join(path.dirname(target), `.old-${path.basename(target)}-${randomBytes(4).toString('hex')}`);
  const hadOld = await stat(target).then(() => true, () => false);
  if (hadOld) await rename(target, old);
  await rename(staging, target);
  if (hadOld) await rm(old, { recursive: true, force: true });
}

/**
 * Copies a model's files into a staging folder (owner-only), hashes them, checks the expected sha256,
 * lets the kind inspect the copy, writes the manifest, then renames it into `${modelDir}/<kind>/<id>/`
 * (replacing an older copy). Nothing is left behind on failure.
 */
export async function installModelFiles<K extends ModelKind>(opts: InstallFilesOptions<K>): Promise<ModelManifest<K>> {
  assertModelId(opts.id);
  const staging = path.join(modelsRoot(opts.modelDir, opts.kind), `.staging-${opts.id}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  try {
    const files: Record<string, string> = {};
    const sha256: Record<string, string> = {};
    for (const [role, file] of Object.entries(opts.files)) {
      if (!file) continue;
      await copyFileOwnerOnly(file.from, path.join(staging, file.to));
      sha256[file.to] = await sha256File(path.join(staging, file.to));
      if (opts.listed.includes(role)) files[role] = file.to;
      const expected = opts.expectedSha256?.[role];
      if (expected && sha256[file.to] !== expected.toLowerCase()) throw new Error(`${file.from}: sha256 ${sha256[file.to]} does not match the expected ${expected}`);
    }
    const facts = await opts.inspect(staging);
    const manifest = {
      id: opts.id,
      name: opts.name ?? opts.id,
      kind: opts.kind,
      files,
      sha256,
      ...facts,
      source: opts.source,
      licence: opts.licence ?? 'unknown (not stated by the source)',
      ...(opts.method ? { method: opts.method } : {}),
      installed_at: new Date().toISOString(),
    } as unknown as ModelManifest<K>;
    await writeManifest(staging, manifest);
    await moveIntoPlace(staging, modelFolder(opts.modelDir, opts.kind, opts.id));
    if (opts.activate ?? true) await setActiveModel(opts.modelDir, opts.kind, opts.id);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
