import type { Config } from '../../core/config.js';
import type { LoadGeneratorOptions } from '../../native/llm/index.js';

/** The chat backend's options from the service's configuration (LLM_BACKEND, N_CTX, N_THREADS, N_GPU_LAYERS, INFERENCE_URL, HOSTED_LLM_*). */
export function generatorOptions(llm: Config['llm']): Pick<LoadGeneratorOptions, 'backend' | 'nCtx' | 'threads' | 'gpuLayers' | 'inferenceUrl' | 'hosted'> {
  return {
    backend: llm.backend,
    nCtx: llm.nCtx,
    threads: llm.nThreads,
    gpuLayers: llm.nGpuLayers,
    inferenceUrl: llm.inferenceUrl,
    hosted: { baseUrl: llm.hostedBaseUrl, apiKey: llm.hostedApiKey, model: llm.hostedModel },
  };
}
