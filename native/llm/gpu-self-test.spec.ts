import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STORIES_GGUF } from '../../test/fixtures/models.js';
import { selfTestGpu } from './gpu-self-test.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-selftest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a llama.cpp build tested in a child process', { timeout: 120_000 }, () => {
  it('passes for the CPU build on a real model: it loaded, decoded and reported back', async () => {
    expect(await selfTestGpu(STORIES_GGUF, false)).toEqual({ ok: true, gpu: false, offloadedLayers: 0 });
  });

  it('reports the CUDA build as it is here: working with a layer offloaded, or failed with the reason the runtime gave', async () => {
    const result = await selfTestGpu(STORIES_GGUF, 'cuda');
    if (result.ok) expect(result).toMatchObject({ gpu: 'cuda', offloadedLayers: 1 });
    else {
      // No GPU here: node-llama-cpp's own words, not a generic exit code.
      expect(result.reason).toMatch(/CUDA|binary|cuda/);
      expect(result.reason).not.toMatch(/exited with/);
    }
  });

  it('fails with llama.cpp\'s reason for a file that is no model, and on a time limit that the load cannot meet', async () => {
    const junk = path.join(dir, 'junk.gguf');
    writeFileSync(junk, 'not a GGUF at all');
    const bad = await selfTestGpu(junk, false);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.reason).toMatch(/error|fail/i);
    expect(await selfTestGpu(STORIES_GGUF, false, 50)).toEqual({ ok: false, reason: 'no answer within 50 ms' });
  });
});
