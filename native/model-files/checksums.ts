import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { MODEL_KINDS, type ModelKind, type ModelManifest } from './manifest.js';

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/** Hashes every file a manifest names (by file name). */
export async function hashModelFiles(folder: string, files: ModelManifest['files']): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of Object.values(files) as (string | undefined)[]) if (name) out[name] = await sha256File(path.join(folder, name));
  return out;
}

/** Refuses a model whose files differ from the sha256 recorded in its manifest (hashing ~150 MB takes well under a second). */
export async function verifyModelFiles(model: { id: string; folder: string; manifest: ModelManifest<ModelKind> }): Promise<void> {
  const label = MODEL_KINDS[model.manifest.kind].label;
  const actual = await hashModelFiles(model.folder, model.manifest.files).catch((err: Error) => {
    throw new Error(`${label} "${model.id}" is incomplete: ${err.message}`);
  });
  for (const [name, expected] of Object.entries(model.manifest.sha256)) {
    if (name in actual && actual[name] !== expected) {
      throw new Error(
        `${label} "${model.id}" refused: ${name} has sha256 ${actual[name]} but its manifest pins ${expected} (file changed or corrupted; re-import or re-pull it)`,
      );
    }
  }
}
