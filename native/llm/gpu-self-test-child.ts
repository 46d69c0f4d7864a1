/**
 * The child side of selfTestGpu (gpu-self-test.ts): `gpu-self-test-child MODEL_PATH GPU`, GPU `cuda` or `false` (the CPU
 * build). Opens that build, loads the model with one layer offloaded, decodes a few tokens, reports over IPC, exits.
 * A broken build may abort here: that is what the child is for.
 */
import { getLlama, LlamaCompletion, LlamaLogLevel } from 'node-llama-cpp';
import type { ChildReport } from './gpu-self-test.js';

async function run(modelPath: string, gpu: 'cuda' | false): Promise<ChildReport> {
  const llama = await getLlama({ gpu, build: 'never', logLevel: LlamaLogLevel.error });
  try {
    if (gpu && llama.gpu !== gpu) throw new Error(`node-llama-cpp opened the ${llama.gpu || 'CPU'} build, not ${gpu}`);
    const model = await llama.loadModel({ modelPath, gpuLayers: gpu ? 1 : 0 });
    const context = await model.createContext({ contextSize: 256, sequences: 1 });
    await new LlamaCompletion({ contextSequence: context.getSequence() }).generateCompletion('Once upon a time', { maxTokens: 4 });
    return { gpu: llama.gpu, offloadedLayers: model.gpuLayers };
  } finally {
    await llama.dispose();
  }
}

const [modelPath, gpu] = process.argv.slice(2);
try {
  const report = await run(modelPath, gpu === 'false' ? false : 'cuda');
  process.send!(report, () => process.exit(0));
} catch (err) {
  console.error(`error: ${(err as Error).message}`);
  process.exit(1);
}
