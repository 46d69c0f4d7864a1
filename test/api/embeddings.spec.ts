import { execFile } from 'node:child_process';
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEmbedder, pullModel, type Embedder } from '../../native/embeddings/index.js';
import { EMBEDDING_PRESETS, modelsRoot, readManifest, sha256File, type EmbeddingPreset } from '../../native/model-files/index.js';
import { main as modelsCli } from '../../appliance/cli/models.js';
import { POTION_BASE_4M_DIR } from '../fixtures/models.js';
import { buildTinyEmbeddingModel, installTinyEmbeddingModel, TINY_MODEL_ID, TOKENIZER_DIR } from '../fixtures/tiny-embedding-model.js';
import { scratchFolders } from '../fixtures/scratch-folders.js';

const run = promisify(execFile);
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i], 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));
const tmp = scratchFolders('hearth-embed-');
const silent = { info: () => {}, warn: () => {} };
const embeddingsRoot = (modelDir: string) => modelsRoot(modelDir, 'embedding');

/** Whether onnxruntime itself opens a CUDA session here (provider libraries, CUDA runtime and a GPU), asked without Hearth's code. */
async function cudaSessionOpens(modelPath: string): Promise<boolean> {
  try {
    await (await ort.InferenceSession.create(modelPath, { executionProviders: ['cuda'], logSeverityLevel: 4 })).release();
    return true;
  } catch {
    return false;
  }
}

/** Runs the real CLI as a user would, with MODEL_DIR in its environment. */
async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('npx', ['tsx', 'appliance/cli/main.ts', 'models', ...args], { env: { ...process.env, ...env }, cwd: path.resolve(import.meta.dirname, '..', '..') });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A loopback "hub" serving files at /<repo>/resolve/<revision>/<path>. */
async function hub(files: Record<string, Buffer>): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const body = files[decodeURIComponent(req.url ?? '')];
    if (!body) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe('ONNX embedder on the tiny model', () => {
  let modelDir: string;
  let embedder: Embedder;
  let tokenizer: Tokenizer;

  beforeAll(async () => {
    modelDir = await tmp();
    await installTinyEmbeddingModel(modelDir);
    embedder = (await loadEmbedder({ modelDir, device: 'cpu', log: silent }))!;
    tokenizer = new Tokenizer(
      JSON.parse(await readFile(path.join(TOKENIZER_DIR, 'tokenizer.json'), 'utf8')),
      JSON.parse(await readFile(path.join(TOKENIZER_DIR, 'tokenizer_config.json'), 'utf8')),
    );
  });
  afterAll(() => embedder?.close());

  it('loads through loadEmbedder with the manifest dimension and unit-norm vectors', async () => {
    const manifest = await readManifest(path.join(embeddingsRoot(modelDir), TINY_MODEL_ID), 'embedding');
    expect(embedder.dimension).toBe(manifest.dimension);
    expect(embedder.maxTokens).toBe(256);
    expect(embedder.device).toBe('cpu');
    expect(embedder.modelId).toBe(`${TINY_MODEL_ID}@${manifest.sha256['model.onnx'].slice(0, 12)}`);
    expect(await embedder.embed([])).toEqual([]);
    const vectors = await embedder.embed(['hello world', 'How do I sort numbers in a file?', '']);
    for (const v of vectors) {
      expect(v).toHaveLength(32);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('gives the same vectors batched as one by one, so padding changes nothing', async () => {
    const texts = ['short', 'a somewhat longer sentence about heating systems', 'x', 'the boiler manual, page three: bleed the radiators before winter'];
    const batched = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      for (let j = 0; j < alone.length; j++) expect(batched[i][j]).toBeCloseTo(alone[j], 6);
    }
  });

  it('scores a text sharing words above an unrelated one', async () => {
    const [text, paraphrase, unrelated] = await embedder.embed([
      'how to bleed the radiators of the boiler heating system',
      'bleed radiators on a boiler heating system: how to',
      'quarterly invoice totals exported to spreadsheet',
    ]);
    expect(dot(text, paraphrase)).toBeGreaterThan(dot(text, unrelated) + 0.3);
  });

  it('truncates long input to max_tokens without error', async () => {
    const [long] = await embedder.embed(['apple '.repeat(400) + 'zebra '.repeat(400)]);
    const [kept] = await embedder.embed(['apple '.repeat(254)]);
    for (let j = 0; j < kept.length; j++) expect(long[j]).toBeCloseTo(kept[j], 5);
    const [noSpaces] = await embedder.embed(['x'.repeat(100_000)]);
    expect(norm(noSpaces)).toBeCloseTo(1, 5);
  });

  it('counts tokens like the tokenizer, special tokens excluded', () => {
    expect(embedder.countTokens('hello world')).toBe(2);
    expect(embedder.countTokens('How do I sort numbers in a file?')).toBe(9);
    const text = 'Hearth indexes PDFs, DOCX and spreadsheets; unaffordable antidisestablishmentarianism!';
    expect(embedder.countTokens(text)).toBe(tokenizer.encode(text, { add_special_tokens: false }).ids.length);
    expect(embedder.countTokens('')).toBe(0);
  });
});

describe('model discovery and loading', () => {
  it('returns null when no model is installed', async () => {
    const dir = await tmp();
    expect(await loadEmbedder({ modelDir: dir, device: 'cpu' })).toBeNull();
    expect(await loadEmbedder({ modelDir: path.join(dir, 'absent'), device: 'cpu' })).toBeNull();
  });

  it('refuses a model whose file no longer matches its manifest sha256', async () => {
    const dir = await tmp();
    await installTinyEmbeddingModel(dir);
    const file = path.join(embeddingsRoot(dir), TINY_MODEL_ID, 'model.onnx');
    const bytes = await readFile(file);
    bytes[bytes.length - 10] ^= 0xff;
    await writeFile(file, bytes);
    await expect(loadEmbedder({ modelDir: dir, device: 'cpu' })).rejects.toThrow(/refused: model\.onnx has sha256 .* manifest pins/);
  });

  it('follows ACTIVE, else the newest install', async () => {
    const dir = await tmp();
    await installTinyEmbeddingModel(dir, { id: 'first', hidden: 16 });
    await installTinyEmbeddingModel(dir, { id: 'second', hidden: 24 });
    const second = await loadEmbedder({ modelDir: dir, device: 'cpu' });
    expect(second?.dimension).toBe(24);
    await second?.close();
    await writeFile(path.join(embeddingsRoot(dir), 'ACTIVE'), 'first\n');
    const first = await loadEmbedder({ modelDir: dir, device: 'cpu' });
    expect(first?.dimension).toBe(16);
    await first?.close();
    await rm(path.join(embeddingsRoot(dir), 'ACTIVE'));
    const newest = await loadEmbedder({ modelDir: dir, device: 'cpu' });
    expect(newest?.modelId.startsWith('second@')).toBe(true);
    await newest?.close();
  });

  it('runs exports without token_type_ids and with another output name', async () => {
    const dir = await tmp();
    await installTinyEmbeddingModel(dir, { tokenTypes: false, outputName: 'token_embeddings' });
    const embedder = (await loadEmbedder({ modelDir: dir, device: 'cpu' }))!;
    const [v] = await embedder.embed(['hello world']);
    expect(norm(v)).toBeCloseTo(1, 5);
    await embedder.close();
  });

  it('EMBED_DEVICE=cuda runs on the GPU where onnxruntime opens a CUDA session, else fails clearly; auto follows, falling back to cpu with one log line', async () => {
    const dir = await tmp();
    await installTinyEmbeddingModel(dir);
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
    if (await cudaSessionOpens(path.join(embeddingsRoot(dir), TINY_MODEL_ID, 'model.onnx'))) {
      const [cuda, auto, cpu] = [await loadEmbedder({ modelDir: dir, device: 'cuda' }), await loadEmbedder({ modelDir: dir, device: 'auto', log }), await loadEmbedder({ modelDir: dir, device: 'cpu' })];
      expect([cuda?.device, auto?.device, cpu?.device]).toEqual(['cuda', 'cuda', 'cpu']);
      expect(lines).toEqual([]);
      const [[onGpu], [onCpu]] = [await cuda!.embed(['the harbour master']), await cpu!.embed(['the harbour master'])];
      expect(dot(onGpu, onCpu)).toBeCloseTo(1, 3);
      await Promise.all([cuda!.close(), auto!.close(), cpu!.close()]);
      return;
    }
    await expect(loadEmbedder({ modelDir: dir, device: 'cuda' })).rejects.toThrow(/EMBED_DEVICE=cuda but CUDA is not usable/);
    const embedder = (await loadEmbedder({ modelDir: dir, device: 'auto', log }))!;
    expect(embedder.device).toBe('cpu');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/CUDA not available.*CPU/);
    await embedder.close();
  });
});

describe('models CLI', () => {
  it('imports a model folder, writes the manifest and makes it active', async () => {
    const src = await buildTinyEmbeddingModel(path.join(await tmp(), 'my-model'));
    await rm(path.join(src, 'manifest.json')); // a plain exported folder, as from a hub snapshot
    const modelDir = await tmp();
    const r = await cli(['import', src, '--id', 'usb-model'], { MODEL_DIR: modelDir });
    expect(r.code, r.stderr).toBe(0);
    const manifest = await readManifest(path.join(embeddingsRoot(modelDir), 'usb-model'), 'embedding');
    expect(manifest).toMatchObject({ id: 'usb-model', kind: 'embedding', dimension: 32, pooling: 'mean', normalize: true });
    expect(manifest.sha256['model.onnx']).toBe(await sha256File(path.join(src, 'model.onnx')));
    expect((await readFile(path.join(embeddingsRoot(modelDir), 'ACTIVE'), 'utf8')).trim()).toBe('usb-model');
    const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
    expect(embedder.dimension).toBe(32);
    await embedder.close();
    expect((await cli(['list'], { MODEL_DIR: modelDir })).stdout).toMatch(/^\* usb-model {2}32d/m);
  });

  it('use switches the active model and refuses an id that is not installed; list reports broken folders', async () => {
    const modelDir = await tmp();
    await installTinyEmbeddingModel(modelDir, { id: 'one', hidden: 8 });
    await installTinyEmbeddingModel(modelDir, { id: 'two', hidden: 8 });
    await writeFile(path.join(embeddingsRoot(modelDir), 'two', 'manifest.json'), '{');
    const saved = process.env.MODEL_DIR;
    process.env.MODEL_DIR = modelDir;
    try {
      const out: string[] = [];
      const err: string[] = [];
      expect(await modelsCli(['use', 'missing'], (l) => out.push(l), (l) => err.push(l))).toBe(1);
      expect(err.join('\n')).toMatch(/"missing" is not an installed model/);
      expect(await modelsCli(['use', 'one'], (l) => out.push(l), (l) => err.push(l))).toBe(0);
      expect((await readFile(path.join(embeddingsRoot(modelDir), 'ACTIVE'), 'utf8')).trim()).toBe('one');
      expect(await modelsCli(['list'], (l) => out.push(l), (l) => err.push(l))).toBe(0);
      expect(out.join('\n')).toMatch(/^\* one {2}8d/m);
      expect(err.join('\n')).toMatch(/broken: .*two/);
      expect(await modelsCli(['frobnicate'], () => {}, () => {})).toBe(2);
    } finally {
      if (saved === undefined) delete process.env.MODEL_DIR;
      else process.env.MODEL_DIR = saved;
    }
  });

  it('refuses to import a folder whose files contradict its manifest', async () => {
    const src = await buildTinyEmbeddingModel(path.join(await tmp(), 'exported'));
    await cp(path.join(TOKENIZER_DIR, 'vocab.txt'), path.join(src, 'tokenizer.json'));
    const modelDir = await tmp();
    const r = await cli(['import', src], { MODEL_DIR: modelDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/sha256 .* does not match/);
    expect(await readdir(embeddingsRoot(modelDir))).toEqual([]);
  });

  it('pull fails loudly on a sha256 mismatch and leaves no file behind', async () => {
    const preset = EMBEDDING_PRESETS['all-MiniLM-L6-v2-int8'];
    expect(preset.files.model.sha256).toBe('afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1');
    const src = await buildTinyEmbeddingModel(await tmp());
    const base = `/${preset.repo}/resolve/${preset.revision}/`;
    const server = await hub({
      [base + 'onnx/model_quantized.onnx']: await readFile(path.join(src, 'model.onnx')), // not the pinned bytes
      [base + 'tokenizer.json']: await readFile(path.join(TOKENIZER_DIR, 'tokenizer.json')),
      [base + 'tokenizer_config.json']: await readFile(path.join(TOKENIZER_DIR, 'tokenizer_config.json')),
      [base + 'config.json']: await readFile(path.join(TOKENIZER_DIR, 'config.json')),
    });
    const modelDir = await tmp();
    try {
      const r = await cli(['pull'], { MODEL_DIR: modelDir, HEARTH_MODEL_HUB_URL: server.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/model_quantized\.onnx: (\d+ bytes, pinned 22972370|sha256 \w+ does not match the pinned afdb6f1a)/);
      expect(await readdir(embeddingsRoot(modelDir))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('pull installs a model whose pinned sha256 matches (pins injected for the test hub)', async () => {
    const src = await buildTinyEmbeddingModel(await tmp());
    const pin = async (file: string, at: string) => ({ path: at, sha256: await sha256File(path.join(src, file)) });
    const preset: EmbeddingPreset = {
      id: 'pulled-tiny',
      name: 'tiny',
      repo: 'test/tiny',
      revision: '0123456789abcdef0123456789abcdef01234567',
      licence: 'test',
      maxTokens: 128,
      files: { model: await pin('model.onnx', 'onnx/model.onnx'), tokenizer: await pin('tokenizer.json', 'tokenizer.json') },
    };
    const base = `/test/tiny/resolve/${preset.revision}/`;
    const server = await hub({ [base + 'onnx/model.onnx']: await readFile(path.join(src, 'model.onnx')), [base + 'tokenizer.json']: await readFile(path.join(src, 'tokenizer.json')) });
    const modelDir = await tmp();
    try {
      const manifest = await pullModel({ modelDir, preset, hubUrl: server.url });
      expect(manifest).toMatchObject({ id: 'pulled-tiny', dimension: 32, max_tokens: 128, source: `pull:${server.url}/test/tiny@${preset.revision}` });
      expect(await readdir(embeddingsRoot(modelDir))).toEqual(['ACTIVE', 'pulled-tiny']);
      const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
      expect(embedder.maxTokens).toBe(128);
      await embedder.close();
      await expect(pullModel({ modelDir, preset: { ...preset, id: 'gone', revision: 'f'.repeat(40) }, hubUrl: server.url })).rejects.toThrow(/HTTP 404/);
      expect((await readdir(embeddingsRoot(modelDir))).sort()).toEqual(['ACTIVE', 'pulled-tiny']);
    } finally {
      await server.close();
    }
  });

  /** The vendored potion-base-4M-int8 files as a hub serves them at `base`. */
  const potionFiles = async (base: string) => ({
    [base + 'model.safetensors']: await readFile(path.join(POTION_BASE_4M_DIR, 'model.safetensors')),
    [base + 'tokenizer.json']: await readFile(path.join(POTION_BASE_4M_DIR, 'tokenizer.json')),
    [base + 'config.json']: await readFile(path.join(POTION_BASE_4M_DIR, 'config.json')),
  });

  it('pulls a Model2Vec model whose small files are pinned by the commit alone (the hub publishes no sha256 for them); such a pin at a branch is refused', async () => {
    const preset: EmbeddingPreset = {
      id: 'pulled-potion',
      name: 'potion',
      repo: 'test/potion',
      revision: '89abcdef0123456789abcdef0123456789abcdef',
      licence: 'MIT',
      format: 'model2vec',
      maxTokens: 512,
      files: {
        model: { path: 'model.safetensors', sha256: await sha256File(path.join(POTION_BASE_4M_DIR, 'model.safetensors')) },
        tokenizer: { path: 'tokenizer.json', sha256: null },
        config: { path: 'config.json', sha256: null },
      },
    };
    const server = await hub(await potionFiles(`/test/potion/resolve/${preset.revision}/`));
    const modelDir = await tmp();
    const logged: string[] = [];
    try {
      const manifest = await pullModel({ modelDir, preset, hubUrl: server.url, log: (line) => logged.push(line) });
      expect(manifest).toMatchObject({ id: 'pulled-potion', format: 'model2vec', dimension: 128, max_tokens: 512 });
      // What the commit pinned is recorded: the installed files are checked against it from then on.
      expect(manifest.sha256[manifest.files.tokenizer]).toBe(await sha256File(path.join(POTION_BASE_4M_DIR, 'tokenizer.json')));
      expect(logged.join('\n')).toMatch(/tokenizer\.json \(\d+ bytes, sha256 [0-9a-f]{64}: pinned by the commit alone\)/);
      expect(logged.join('\n')).toMatch(/model\.safetensors \(\d+ bytes, sha256 verified\)/);
      const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
      const [a, b, c] = await embedder.embed(['how do I reset my password', 'steps to recover a forgotten login password', 'the weather is sunny today']);
      expect(dot(a, b)).toBeGreaterThan(dot(a, c) + 0.3);
      await embedder.close();

      await expect(pullModel({ modelDir, preset: { ...preset, id: 'at-a-branch', revision: 'main' }, hubUrl: server.url })).rejects.toThrow(
        'at-a-branch: tokenizer, config have no sha256 pin, so the revision must be a full commit id, not "main"',
      );
      expect((await readdir(embeddingsRoot(modelDir))).sort()).toEqual(['ACTIVE', 'pulled-potion']);
    } finally {
      await server.close();
    }
  });

  it('knows potion-base-8M and potion-retrieval-32M, each pinned at a commit; potion-base-8M refuses a table that is not its pinned bytes', async () => {
    for (const id of ['potion-base-8M', 'potion-retrieval-32M']) {
      expect(EMBEDDING_PRESETS[id]).toMatchObject({ id, format: 'model2vec', licence: 'MIT', repo: `minishlab/${id}` });
      expect(EMBEDDING_PRESETS[id].revision).toMatch(/^[0-9a-f]{40}$/);
    }
    const preset = EMBEDDING_PRESETS['potion-base-8M'];
    expect(preset.files.model.sha256).toBe('f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2');
    const server = await hub(await potionFiles(`/${preset.repo}/resolve/${preset.revision}/`)); // the 4M files: not the pinned table
    const modelDir = await tmp();
    try {
      const r = await cli(['pull', '--model', 'potion-base-8M'], { MODEL_DIR: modelDir, HEARTH_MODEL_HUB_URL: server.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/model\.safetensors: sha256 \w+ does not match the pinned f65d0f32/);
      expect(await readdir(embeddingsRoot(modelDir))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
