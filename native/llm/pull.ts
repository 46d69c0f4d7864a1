import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_HUB_URL, download, type PinnedFile } from '../embeddings/pull.js';
import { installLlm, llmRoot, type LlmManifest } from './models.js';

export interface LlmPreset {
  id: string;
  name: string;
  repo: string;
  /** The sha256 pin, not the revision, is what guarantees the bytes. */
  revision: string;
  licence: string;
  file: PinnedFile;
}

// Size and sha256 from ../shared/models/README.md. The repo, file name and revision could not be
// checked from this offline box: a different file at that path fails the sha256 pin and is deleted.
export const LLM_PRESETS: Readonly<Record<string, LlmPreset>> = Object.freeze({
  'smollm2-135m-instruct-q8': {
    id: 'smollm2-135m-instruct-q8',
    name: 'SmolLM2-135M-Instruct (Q8_0 GGUF)',
    repo: 'HuggingFaceTB/SmolLM2-135M-Instruct-GGUF',
    revision: 'main',
    licence: 'Apache-2.0',
    file: { path: 'smollm2-135m-instruct-q8_0.gguf', sha256: '4090835042df84521a580391915d5cfed516b911e203a1580f1d69aa7a4b9bf8', size: 144811968 },
  },
});

/** Downloads a pinned GGUF (size and sha256 checked while streaming), then installs it like an import. */
export async function pullLlm(opts: { modelDir: string; preset: LlmPreset; hubUrl?: string; activate?: boolean; log?: (msg: string) => void }): Promise<LlmManifest> {
  const { preset } = opts;
  const hub = (opts.hubUrl ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const dir = path.join(llmRoot(opts.modelDir), `.download-${preset.id}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  try {
    const file = path.join(dir, path.basename(preset.file.path));
    const url = `${hub}/${preset.repo}/resolve/${preset.revision}/${preset.file.path.split('/').map(encodeURIComponent).join('/')}`;
    opts.log?.(`fetching ${url}`);
    await download(url, file, preset.file, opts.log);
    return await installLlm({
      modelDir: opts.modelDir,
      file,
      id: preset.id,
      source: `pull:${hub}/${preset.repo}@${preset.revision}`,
      name: preset.name,
      licence: preset.licence,
      expectedSha256: preset.file.sha256,
      activate: opts.activate,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
