import path from 'node:path';
import { resolveActiveModel, verifyModelFiles } from '../model-files/index.js';
import type { Generator } from './generator.js';
import { silentLog, type LlmLog } from './llm-log.js';
import { LocalGenerator } from './local-generator.js';
import { DEFAULT_HOSTED_BASE_URL, OpenAIGenerator } from './openai-generator.js';

/** Which chat backend to open, and how; the service maps its configuration onto these. */
export interface LoadGeneratorOptions {
  /** Where chat models are installed (MODEL_DIR: its llm/ folder). */
  modelDir: string;
  /** 'hosted': the OpenAI-compatible API in `hosted`; 'local': the llama.cpp server at `inferenceUrl` when set, else the GGUF in modelDir. */
  backend: 'local' | 'hosted';
  /** Context size asked for, in tokens (a local model may get less: what it was trained on, what memory holds). */
  nCtx: number;
  /** CPU threads of an in-process model (capped at the cores present). */
  threads: number;
  /** Layers offloaded to a CUDA GPU when one answers: -1 all, 0 none. */
  gpuLayers: number;
  /** A llama.cpp server: its root or its /v1 API root. */
  inferenceUrl?: string;
  /** The hosted API: base URL (default DEFAULT_HOSTED_BASE_URL), key and model name. */
  hosted?: { baseUrl?: string; apiKey?: string; model?: string };
  /** Seconds a generation may take (a function: read per request, so a changed setting applies at once). */
  timeoutSeconds: number | (() => number);
  log?: LlmLog;
  /** Requests waiting behind the running one on the local model before 503 (default 8). */
  maxWaiting?: number;
}

/** An inference server URL may name the server root or its /v1 API root. */
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
 *   1. backend 'hosted': the OpenAI-compatible API at hosted.baseUrl with hosted.apiKey.
 *   2. inferenceUrl set: the llama.cpp server there, even when a GGUF is installed locally.
 *   3. the GGUF in modelDir/llm (ACTIVE, else the only or newest), in process, sha256-checked.
 *   4. none of these: null, and answers are extractive.
 */
export async function loadGenerator(opts: LoadGeneratorOptions): Promise<Generator | null> {
  const log = opts.log ?? silentLog;
  if (opts.backend === 'hosted') {
    const baseUrl = opts.hosted?.baseUrl ?? DEFAULT_HOSTED_BASE_URL;
    log.info(`chat model: hosted ${opts.hosted?.model} at ${new URL(baseUrl).host}`);
    return new OpenAIGenerator({ backend: 'hosted', baseUrl, apiKey: opts.hosted?.apiKey, model: opts.hosted?.model, nCtx: opts.nCtx, timeoutSeconds: opts.timeoutSeconds, log });
  }
  if (opts.inferenceUrl) {
    const root = openAiRoot(opts.inferenceUrl);
    log.info(`chat model: the inference server at ${new URL(root).host} (INFERENCE_URL wins over a local GGUF)`);
    return new OpenAIGenerator({ backend: 'inference-server', baseUrl: root, model: await servedModel(root, log), nCtx: opts.nCtx, timeoutSeconds: opts.timeoutSeconds, log });
  }
  const installed = await resolveActiveModel(opts.modelDir, 'llm');
  if (!installed) return null;
  await verifyModelFiles(installed);
  return LocalGenerator.load({
    modelPath: path.join(installed.folder, installed.manifest.files.model),
    name: installed.manifest.name,
    fileLabel: `${installed.id}/${installed.manifest.files.model}`,
    nCtx: opts.nCtx,
    nThreads: opts.threads,
    nGpuLayers: opts.gpuLayers,
    timeoutSeconds: opts.timeoutSeconds,
    maxWaiting: opts.maxWaiting,
    log,
  });
}
