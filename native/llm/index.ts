// Public surface of native/llm: the rest of Hearth imports from here, never node-llama-cpp.
import type { Config } from '../../core/config.js';
import type { Generator } from './generator.js';
import { silentLog, type LlmLog } from './llm-log.js';
import { LocalGenerator } from './local-generator.js';
import { resolveActiveLlm, verifyLlm } from './models.js';
import { DEFAULT_HOSTED_BASE_URL, OpenAIGenerator } from './openai-generator.js';

export * from './generator.js';
export type { LlmLog } from './llm-log.js';
export { LocalGenerator, type LocalGeneratorOptions } from './local-generator.js';
export { DEFAULT_HOSTED_BASE_URL, OpenAIGenerator, type OpenAIGeneratorOptions } from './openai-generator.js';
export { importLlm, installLlm, llmFolder, llmRoot, readLlmManifest, resolveActiveLlm, setActiveLlm, verifyLlm, type InstalledLlm, type LlmManifest } from './models.js';
export { LLM_PRESETS, pullLlm, type LlmPreset } from './pull.js';

export interface LoadGeneratorOptions {
  config: Config['llm'];
  modelDir: string;
  /** INFERENCE_TIMEOUT_SECONDS (a function: read per request, so a changed setting applies at once). */
  timeoutSeconds: number | (() => number);
  log?: LlmLog;
  /** Requests waiting behind the running one on the local model before 503 (default 8). */
  maxWaiting?: number;
}

/** INFERENCE_URL may name the server root or its /v1 API root. */
function openAiRoot(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return /\/v1$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
}

/** The model a llama.cpp server serves (GET /v1/models), for model-info; a server that is down yet only warns. */
async function servedModel(root: string, log: LlmLog): Promise<string | undefined> {
  try {
    const res = await fetch(`${root}/models`, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.json()) as { data?: { id?: unknown }[] };
    const id = body.data?.[0]?.id;
    return typeof id === 'string' && id ? id : undefined;
  } catch (err) {
    log.warn(`chat model: the inference server at ${new URL(root).host} did not answer GET /v1/models (${(err as Error).name}); chat requests will try it anyway`);
    return undefined;
  }
}

/**
 * The chat backend, first match wins:
 *   1. LLM_BACKEND=hosted: the OpenAI-compatible API at HOSTED_LLM_BASE_URL with HOSTED_LLM_API_KEY.
 *   2. INFERENCE_URL set: the llama.cpp server there, even when a GGUF is installed locally.
 *   3. the GGUF in MODEL_DIR/llm (ACTIVE, else the only or newest), in process, sha256-checked.
 *   4. none of these: null, and answers are extractive.
 */
export async function loadGenerator(opts: LoadGeneratorOptions): Promise<Generator | null> {
  const { config } = opts;
  const log = opts.log ?? silentLog;
  if (config.backend === 'hosted') {
    log.info(`chat model: hosted ${config.hostedModel} at ${new URL(config.hostedBaseUrl ?? DEFAULT_HOSTED_BASE_URL).host}`);
    return new OpenAIGenerator({
      backend: 'hosted',
      baseUrl: config.hostedBaseUrl ?? DEFAULT_HOSTED_BASE_URL,
      apiKey: config.hostedApiKey,
      model: config.hostedModel,
      nCtx: config.nCtx,
      timeoutSeconds: opts.timeoutSeconds,
      log,
    });
  }
  if (config.inferenceUrl) {
    const root = openAiRoot(config.inferenceUrl);
    log.info(`chat model: the inference server at ${new URL(root).host} (INFERENCE_URL wins over a local GGUF)`);
    return new OpenAIGenerator({ backend: 'inference-server', baseUrl: root, model: await servedModel(root, log), nCtx: config.nCtx, timeoutSeconds: opts.timeoutSeconds, log });
  }
  const installed = await resolveActiveLlm(opts.modelDir);
  if (!installed) return null;
  const modelPath = await verifyLlm(installed);
  return LocalGenerator.load({
    modelPath,
    name: installed.manifest.name,
    fileLabel: `${installed.id}/${installed.manifest.files.model}`,
    nCtx: config.nCtx,
    nThreads: config.nThreads,
    nGpuLayers: config.nGpuLayers,
    timeoutSeconds: opts.timeoutSeconds,
    maxWaiting: opts.maxWaiting,
    log,
  });
}
