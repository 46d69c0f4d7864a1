import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { installModelFiles, pullPinnedFiles, type LlmManifest, type LlmPreset, type PullOptions } from '../model-files/index.js';

const MODEL_FILE = 'model.gguf';

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

interface InstallLlmOptions {
  modelDir: string;
  file: string;
  id: string;
  source: string;
  name?: string;
  licence?: string;
  expectedSha256?: string;
  activate?: boolean;
}

/** Installs a GGUF as `${modelDir}/llm/<id>/model.gguf` through model-files (staged copy, sha256, manifest, ACTIVE). */
async function installLlm(opts: InstallLlmOptions): Promise<LlmManifest> {
  await assertGguf(opts.file);
  return installModelFiles({
    modelDir: opts.modelDir,
    kind: 'llm',
    id: opts.id,
    files: { model: { from: opts.file, to: MODEL_FILE } },
    listed: ['model'],
    expectedSha256: { model: opts.expectedSha256 },
    source: opts.source,
    name: opts.name,
    licence: opts.licence,
    activate: opts.activate,
    inspect: async (staging) => ({ bytes: (await stat(path.join(staging, MODEL_FILE))).size }),
  });
}

/** `models import-llm FILE.gguf [--id ID]`: the id defaults to the file name without .gguf. */
export async function importLlm(file: string, opts: { modelDir: string; id?: string; name?: string; licence?: string; activate?: boolean }): Promise<LlmManifest> {
  const src = path.resolve(file);
  const id = opts.id ?? path.basename(src).replace(/\.gguf$/i, '').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return installLlm({ ...opts, file: src, id, source: `import:${src}` });
}

/** Downloads a pinned GGUF (size and sha256 checked while streaming), then installs it like an import. */
export async function pullLlm(opts: PullOptions & { preset: LlmPreset }): Promise<LlmManifest> {
  const { preset } = opts;
  return pullPinnedFiles('llm', preset, opts, (local, source) =>
    installLlm({
      modelDir: opts.modelDir,
      file: local.model,
      id: preset.id,
      source,
      name: preset.name,
      licence: preset.licence,
      expectedSha256: preset.files.model.sha256 ?? undefined,
      activate: opts.activate,
    }),
  );
}
