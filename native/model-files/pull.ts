import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { modelsRoot } from './installed.js';
import type { ModelKind } from './manifest.js';

export interface PinnedFile {
  /** Path inside the hub repository at the pinned revision. */
  path: string;
  /**
   * Checked while streaming. Null where no sha256 could be read for the file (the hub publishes one for its large
   * files only): the model's revision must then be a full commit id, which names the file's bytes in git, and the
   * sha256 found is what the manifest records.
   */
  sha256: string | null;
  size?: number;
}

/** A full git commit id: what may pin a file that has no sha256 pin. */
const COMMIT_ID = /^[0-9a-f]{40}$/;

/** A model on the hub, pinned: what `models pull` fetches. */
export interface PinnedModel {
  id: string;
  name: string;
  /** Hub repository, e.g. "Xenova/all-MiniLM-L6-v2". */
  repo: string;
  /** Git commit (or branch) of the repository; the sha256 pins are what guarantee the bytes (a file without one: the commit). */
  revision: string;
  licence: string;
  files: { model: PinnedFile } & Record<string, PinnedFile | undefined>;
}

export const DEFAULT_HUB_URL = 'https://huggingface.co';

/** Streams one file to disk, hashing as it goes; a wrong size or sha256 deletes it and throws. */
async function download(url: string, file: string, pin: PinnedFile, log?: (msg: string) => void): Promise<void> {
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
    if (pin.sha256 !== null && sha !== pin.sha256) throw new Error(`${url}: sha256 ${sha} does not match the pinned ${pin.sha256}`);
    log?.(`downloaded ${pin.path} (${bytes} bytes, ${pin.sha256 === null ? `sha256 ${sha}: pinned by the commit alone` : 'sha256 verified'})`);
  } catch (err) {
    await rm(file, { force: true });
    throw err;
  }
}

export interface PullOptions {
  modelDir: string;
  /** Hub base URL (HEARTH_MODEL_HUB_URL): a mirror, or a loopback server in tests. */
  hubUrl?: string;
  activate?: boolean;
  log?: (msg: string) => void;
}

/**
 * Fetches a pinned model's files (size and sha256 checked while streaming) into a download folder
 * under the kind's root, hands their local paths (by role) and the source to `install`, then removes
 * the folder: nothing is left on failure.
 */
export async function pullPinnedFiles<T>(
  kind: ModelKind,
  model: PinnedModel,
  opts: PullOptions,
  install: (local: Record<string, string>, source: string) => Promise<T>,
): Promise<T> {
  const unpinned = Object.entries(model.files).filter(([, pin]) => pin && pin.sha256 === null).map(([role]) => role);
  if (unpinned.length && !COMMIT_ID.test(model.revision)) {
    throw new Error(`${model.id}: ${unpinned.join(', ')} ha${unpinned.length > 1 ? 've' : 's'} no sha256 pin, so the revision must be a full commit id, not "${model.revision}"`);
  }
  const hub = (opts.hubUrl ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const dir = path.join(modelsRoot(opts.modelDir, kind), `.download-${model.id}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  try {
    const local: Record<string, string> = {};
    for (const [role, pin] of Object.entries(model.files)) {
      if (!pin) continue;
      const file = path.join(dir, `${role}-${path.basename(pin.path)}`);
      const url = `${hub}/${model.repo}/resolve/${model.revision}/${pin.path.split('/').map(encodeURIComponent).join('/')}`;
      opts.log?.(`fetching ${url}`);
      await download(url, file, pin, opts.log);
      local[role] = file;
    }
    return await install(local, `pull:${hub}/${model.repo}@${model.revision}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
