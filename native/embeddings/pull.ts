import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { installModel, type ModelSourceFiles } from './install.js';
import { embeddingsRoot, type ModelManifest } from './manifest.js';

export interface PinnedFile {
  /** Path inside the hub repository at the pinned revision. */
  path: string;
  sha256: string;
  size?: number;
}

export interface ModelPreset {
  id: string;
  name: string;
  /** Hub repository, e.g. "Xenova/all-MiniLM-L6-v2". */
  repo: string;
  /** Git commit of the repository: a moved branch never changes what is fetched. */
  revision: string;
  licence: string;
  maxTokens: number;
  files: { model: PinnedFile; tokenizer: PinnedFile; tokenizer_config?: PinnedFile; config?: PinnedFile };
}

export const DEFAULT_HUB_URL = 'https://huggingface.co';
export const DEFAULT_PRESET = 'all-MiniLM-L6-v2-int8';

// Pins from ../shared/models/README.md (Xenova packaging of sentence-transformers/all-MiniLM-L6-v2).
const MINILM_REVISION = '48a5a372879ed2ed147ab84836e345977276d9b2';
const MINILM_TOKENIZER = {
  tokenizer: { path: 'tokenizer.json', sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0', size: 711661 },
  tokenizer_config: { path: 'tokenizer_config.json', sha256: '9261e7d79b44c8195c1cada2b453e55b00aeb81e907a6664974b4d7776172ab3', size: 366 },
  config: { path: 'config.json', sha256: '7135149f7cffa1a573466c6e4d8423ed73b62fd2332c575bf738a0d033f70df7', size: 650 },
};
const MINILM = { repo: 'Xenova/all-MiniLM-L6-v2', revision: MINILM_REVISION, licence: 'Apache-2.0', maxTokens: 256 };

export const MODEL_PRESETS: Readonly<Record<string, ModelPreset>> = Object.freeze({
  'all-MiniLM-L6-v2-int8': {
    ...MINILM,
    id: 'all-MiniLM-L6-v2-int8',
    name: 'all-MiniLM-L6-v2 (int8 quantised ONNX, 384 dimensions)',
    files: { model: { path: 'onnx/model_quantized.onnx', sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1', size: 22972370 }, ...MINILM_TOKENIZER },
  },
  'all-MiniLM-L6-v2-fp32': {
    ...MINILM,
    id: 'all-MiniLM-L6-v2-fp32',
    name: 'all-MiniLM-L6-v2 (fp32 ONNX, 384 dimensions)',
    files: { model: { path: 'onnx/model.onnx', sha256: '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e', size: 90387606 }, ...MINILM_TOKENIZER },
  },
});

/** Streams one file to disk, hashing as it goes; a wrong size or sha256 deletes it and throws. */
export async function download(url: string, file: string, pin: PinnedFile, log?: (msg: string) => void): Promise<void> {
  const res = await fetch(url, { redirect: 'follow' });
  if (!res.ok || !res.body) throw new Error(`GET ${url}: HTTP ${res.status}`);
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      // Stop early rather than fill the disk with something that cannot be the pinned file.
      if (pin.size !== undefined && bytes > pin.size) return done(new Error(`${url}: larger than the pinned ${pin.size} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), meter, createWriteStream(file));
    const sha = hash.digest('hex');
    if (pin.size !== undefined && bytes !== pin.size) throw new Error(`${url}: ${bytes} bytes, pinned ${pin.size}`);
    if (sha !== pin.sha256) throw new Error(`${url}: sha256 ${sha} does not match the pinned ${pin.sha256}`);
    log?.(`downloaded ${pin.path} (${bytes} bytes, sha256 verified)`);
  } catch (err) {
    await rm(file, { force: true });
    throw err;
  }
}

export interface PullOptions {
  modelDir: string;
  preset: ModelPreset;
  /** Hub base URL (HEARTH_MODEL_HUB_URL): a mirror, or a loopback server in tests. */
  hubUrl?: string;
  activate?: boolean;
  log?: (msg: string) => void;
}

/** Fetches a preset by pinned revision and sha256, then installs it like an import. Nothing is left on failure. */
export async function pullModel(opts: PullOptions): Promise<ModelManifest> {
  const { preset } = opts;
  const hub = (opts.hubUrl ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const dir = path.join(embeddingsRoot(opts.modelDir), `.download-${preset.id}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  try {
    const local: Partial<ModelSourceFiles> = {};
    for (const [key, pin] of Object.entries(preset.files) as [keyof ModelSourceFiles, PinnedFile | undefined][]) {
      if (!pin) continue;
      const file = path.join(dir, `${key}-${path.basename(pin.path)}`);
      const url = `${hub}/${preset.repo}/resolve/${preset.revision}/${pin.path.split('/').map(encodeURIComponent).join('/')}`;
      opts.log?.(`fetching ${url}`);
      await download(url, file, pin, opts.log);
      local[key] = file;
    }
    const expectedSha256 = Object.fromEntries(Object.entries(preset.files).map(([k, pin]) => [k, pin?.sha256]));
    return await installModel({
      modelDir: opts.modelDir,
      id: preset.id,
      files: local as ModelSourceFiles,
      source: `pull:${hub}/${preset.repo}@${preset.revision}`,
      name: preset.name,
      licence: preset.licence,
      maxTokens: preset.maxTokens,
      expectedSha256,
      activate: opts.activate,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
