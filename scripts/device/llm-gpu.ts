/**
 * The chat model's CUDA path, checked on a machine with an NVIDIA GPU (docs/appliance.md, "The GPU").
 *
 * For each N_GPU_LAYERS given (default 0, then -1), the service's own chain runs: loadConfig reads the variable,
 * generatorOptions maps it, loadGenerator opens the GGUF installed in a fresh MODEL_DIR (importLlm, sha256 and all).
 * It prints one JSON line per setting: the backend's model-info (device, gpu_layers), the GPU memory nvidia-smi
 * sees this process hold, and tokens per second over a few generations. Nothing is asserted here: the numbers are
 * read, and the note that ran it says what they showed.
 *
 *   npx tsx scripts/device/llm-gpu.ts [model.gguf] [layers...]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config.js';
import { importLlm, loadGenerator } from '../../native/llm/index.js';
import { generatorOptions } from '../../plugins/llm/generator-options.js';

const [modelFile = 'test/fixtures/models/stories260K/stories260K.gguf', ...layerArgs] = process.argv.slice(2);
const layerSettings = layerArgs.length ? layerArgs : ['0', '-1'];

/** MiB of GPU memory nvidia-smi reports this process holding; null where nvidia-smi is absent or lists it not. */
function gpuMemoryMiB(): number | null {
  try {
    const rows = execFileSync('nvidia-smi', ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'], { encoding: 'utf8' });
    const mine = rows.split('\n').map((row) => row.split(',').map((cell) => cell.trim())).find(([pid]) => Number(pid) === process.pid);
    return mine ? Number(mine[1]) : null;
  } catch {
    return null;
  }
}

const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-gpu-'));
try {
  await importLlm(path.resolve(modelFile), { modelDir, activate: true });
  for (const layers of layerSettings) {
    const config = loadConfig({ ...process.env, MODEL_DIR: modelDir, DATA_DIR: modelDir, N_GPU_LAYERS: layers });
    const log = { info: (msg: string) => console.error(`[info] ${msg}`), warn: (msg: string) => console.error(`[warn] ${msg}`) };
    const generator = await loadGenerator({ modelDir, ...generatorOptions(config.llm), timeoutSeconds: 120, log });
    if (!generator) throw new Error(`no chat model found in ${modelDir}`);
    const runs: { tokens: number; seconds: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const started = process.hrtime.bigint();
      const result = await generator.generate([{ role: 'user', content: 'Once upon a time, a little dog' }], { maxTokens: 200, temperature: 0 });
      runs.push({ tokens: result.completionTokens, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
    }
    const warm = runs.slice(1); // the first run pays for warm-up (CUDA kernels load lazily)
    const tokensPerSecond = warm.reduce((sum, run) => sum + run.tokens, 0) / warm.reduce((sum, run) => sum + run.seconds, 0);
    console.log(JSON.stringify({ N_GPU_LAYERS: layers, info: generator.info(), gpu_memory_mib: gpuMemoryMiB(), tokens_per_second: Math.round(tokensPerSecond), runs }));
    await generator.close();
  }
} finally {
  rmSync(modelDir, { recursive: true, force: true });
}
