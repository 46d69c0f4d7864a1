import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STORIES_GGUF } from '../../test/fixtures/models.js';
import { failureReason, selfTestGpu } from './gpu-self-test.js';

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

  it('words a crash by its message, not by the backtrace that follows it (output of a real abort, on an H200 with driver 580)', () => {
    const aborted = [
      '/home/runner/work/node-llama-cpp/node-llama-cpp/llama/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:108: CUDA error',
      '[node-llama-cpp] CUDA error: the provided PTX was compiled with an unsupported toolchain.',
      '[node-llama-cpp]   current device: 0, in function ggml_cuda_kernel_can_use_pdl at /home/runner/work/node-llama-cpp/node-llama-cpp/llama/llama.cpp/ggml/src/ggml-cuda/common.cuh:1679',
      '/opt/hgpu/app/node_modules/@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda/libggml-base.so(ggml_abort+0x152)[0x7fd09c348f42]',
      '/opt/hgpu/app/node_modules/@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda/libggml-cuda.so(_Z27ggml_cuda_op_rms_norm_fusedR25ggml_backend_cuda_contextP11ggml_tensorS2_+0x1ca)[0x7fd057265f1a]',
      '[node-llama-cpp]   cudaFuncGetAttributes(&attr, kernel)',
      '../node(_ZZN4node14ThreadPoolWork12ScheduleWorkEvENUlP9uv_work_sE_4_FUNES2_+0x59)[0xc71349]',
      '/lib/x86_64-linux-gnu/libc.so.6(+0x129ecc)[0x7fa1d3329ecc]',
    ].join('\n');
    expect(failureReason(aborted, 'died')).toBe('CUDA error: the provided PTX was compiled with an unsupported toolchain.');
    expect(failureReason('[warn] llama.cpp: CUDA error: out of memory\n', 'died')).toBe('CUDA error: out of memory');
    expect(failureReason('nothing useful\n', 'the test process died (SIGABRT)')).toBe('the test process died (SIGABRT)');
  });
});
