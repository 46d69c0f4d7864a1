import os from 'node:os';
import path from 'node:path';
import type { ChatHistoryItem, ChatWrapper, Llama, LlamaChat, LlamaContext, LlamaLogLevel, LlamaModel } from 'node-llama-cpp';
import { GenerationDeadline } from './deadline.js';
import { GenerationQueue } from './generation-queue.js';
import { selfTestGpu } from './gpu-self-test.js';
import { silentLog, type LlmLog } from './llm-log.js';
import { GenerationTimeoutError, GeneratorBusyError, type ChatMessage, type GenerateOptions, type GenerationResult, type Generator, type GeneratorInfo } from './generator.js';

interface LocalGeneratorOptions {
  modelPath: string;
  /** Shown in model-info and health: the manifest name. */
  name: string;
  /** Shown as the model file (e.g. "<id>/model.gguf"); defaults to the file name. */
  fileLabel?: string;
  nCtx: number;
  nThreads: number;
  /** -1 = all layers; used only when a CUDA GPU is present. */
  nGpuLayers: number;
  /** INFERENCE_TIMEOUT_SECONDS; a function so that a changed setting applies to the next request. */
  timeoutSeconds: number | (() => number);
  /** Requests allowed to wait behind the running one before GeneratorBusyError. */
  maxWaiting?: number;
  log?: LlmLog;
}

/** Loaded with the first local model: node-llama-cpp's modules cost about 16 MB resident in a service that may never chat locally. */
let llamaCpp: typeof import('node-llama-cpp') | undefined;

/**
 * The CUDA build only where N_GPU_LAYERS asks for offloading and the build passes its self-test in a child process
 * (gpu-self-test.ts): a CUDA build that aborts at the first decode must not take the service down. The CPU build otherwise.
 */
async function openLlama(modelPath: string, threads: number, wantGpu: boolean, log: LlmLog): Promise<Llama> {
  const { LlamaLogLevel, getLlama } = (llamaCpp ??= await import('node-llama-cpp'));
  // llama.cpp warns about harmless GGUF details on every load: keep them at debug, errors at warn.
  const logger = (level: LlamaLogLevel, message: string) => (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal ? log.warn(`llama.cpp: ${message}`) : log.debug?.(`llama.cpp: ${message}`));
  const base = { build: 'never', maxThreads: threads, logLevel: LlamaLogLevel.warn, logger } as const;
  if (wantGpu) {
    const test = await selfTestGpu(modelPath, 'cuda');
    if (test.ok) {
      try {
        return await getLlama({ ...base, gpu: 'cuda' });
      } catch (err) {
        log.info(`chat model: no usable CUDA GPU (${(err as Error).name}): N_GPU_LAYERS ignored, running on the CPU`);
      }
    } else {
      log.warn(`chat model: the CUDA build failed its self-test (${test.reason}): N_GPU_LAYERS ignored, running on the CPU (hearth doctor; docs/appliance.md, "The GPU")`);
    }
  }
  return getLlama({ ...base, gpu: false });
}

/** The model's own template (Jinja or its built-in equivalent); a plain one when the GGUF carries none. */
function chooseChatWrapper(model: LlamaModel, log: LlmLog): ChatWrapper {
  if (model.fileInfo.metadata.tokenizer?.chat_template) {
    const wrapper = llamaCpp!.resolveChatWrapper(model);
    log.info(`chat model: using its own chat template (${wrapper.wrapperName})`);
    return wrapper;
  }
  log.info('chat model: the GGUF has no chat template: using the plain fallback ("### Human" / "### Assistant", node-llama-cpp GeneralChatWrapper)');
  return new llamaCpp!.GeneralChatWrapper();
}

/** The GGUF's declared file type, else the tensor type holding the most weights (files of one type declare none). */
function quantisationOf(model: LlamaModel): string | null {
  const declared = (model.fileInfo.metadata.general as { file_type?: number }).file_type;
  const { GgmlType, GgufFileType } = llamaCpp!;
  if (declared !== undefined && GgufFileType[declared]) return GgufFileType[declared].replace(/^MOSTLY_/, '');
  const weights = new Map<number, number>();
  for (const t of model.fileInfo.fullTensorInfo ?? []) weights.set(t.ggmlType, (weights.get(t.ggmlType) ?? 0) + t.dimensions.reduce<number>((a, b) => a * Number(b), 1));
  const top = [...weights].sort((a, b) => b[1] - a[1])[0];
  return top ? (GgmlType[top[0]] ?? null) : null;
}

function parametersOf(model: LlamaModel): number | null {
  const tensors = model.fileInfo.fullTensorInfo;
  return tensors ? tensors.reduce((sum, t) => sum + t.dimensions.reduce<number>((a, b) => a * Number(b), 1), 0) : null;
}

function toHistory(messages: ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m) => (m.role === 'assistant' ? { type: 'model', response: [m.content] } : { type: m.role, text: m.content }));
  history.push({ type: 'model', response: [] });
  return history;
}

/** In-process llama.cpp (node-llama-cpp) on one context sequence, behind a bounded FIFO queue. */
export class LocalGenerator implements Generator {
  private readonly queue: GenerationQueue;
  private readonly chat: LlamaChat;
  private readonly infoView: GeneratorInfo;
  private running: GenerationDeadline | null = null;
  private closed = false;

  private constructor(
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly chatWrapper: ChatWrapper,
    private readonly timeoutSeconds: number | (() => number),
    info: GeneratorInfo,
    maxWaiting: number,
  ) {
    this.queue = new GenerationQueue(maxWaiting);
    this.chat = new llamaCpp!.LlamaChat({ contextSequence: context.getSequence(), chatWrapper, autoDisposeSequence: false });
    this.infoView = info;
  }

  static async load(opts: LocalGeneratorOptions): Promise<LocalGenerator> {
    const log = opts.log ?? silentLog;
    const cores = os.availableParallelism();
    const threads = Math.max(1, Math.min(opts.nThreads, cores));
    // More threads than cores collapses llama.cpp throughput (seen: 1.8 instead of ~1,400 tokens/s).
    if (threads < opts.nThreads) log.info(`chat model: N_THREADS=${opts.nThreads} capped at the ${cores} cores present`);
    const llama = await openLlama(opts.modelPath, threads, opts.nGpuLayers !== 0, log);
    try {
      const cuda = llama.gpu === 'cuda';
      const model = await llama.loadModel({ modelPath: opts.modelPath, gpuLayers: cuda ? (opts.nGpuLayers < 0 ? 'max' : opts.nGpuLayers) : 0 });
      const trained = model.trainContextSize;
      const cap = Math.min(opts.nCtx, trained);
      if (opts.nCtx > trained) log.warn(`chat model: N_CTX=${opts.nCtx} exceeds the ${trained} tokens ${opts.name} was trained on: using ${trained}`);
      // {max} lets node-llama-cpp shrink the context to what free memory holds for the KV cache.
      const context = await model.createContext({ contextSize: { min: Math.min(cap, 256), max: cap }, threads, sequences: 1 });
      const effective = Math.min(context.contextSize, cap);
      if (effective < cap) log.warn(`chat model: free memory holds a context of ${effective} tokens only (N_CTX=${opts.nCtx}): using ${effective}`);
      const info: GeneratorInfo = {
        backend: 'local',
        model: opts.name,
        file: opts.fileLabel ?? path.basename(opts.modelPath),
        parameters: parametersOf(model),
        quantisation: quantisationOf(model),
        context: { requested: opts.nCtx, effective, trained },
        threads,
        gpu_layers: model.gpuLayers,
        device: cuda && model.gpuLayers > 0 ? 'cuda' : 'cpu',
      };
      log.info(`chat model: ${opts.name} loaded (EFFECTIVE_N_CTX=${effective}, ${threads} threads, ${info.device}, ${model.gpuLayers} GPU layers)`);
      return new LocalGenerator(llama, model, context, chooseChatWrapper(model, log), opts.timeoutSeconds, info, opts.maxWaiting ?? 8);
    } catch (err) {
      await llama.dispose();
      throw err;
    }
  }

  countTokens(text: string): number {
    return this.model.tokenize(text).length;
  }

  countPromptTokens(messages: ChatMessage[]): number {
    const { contextText } = this.chatWrapper.generateContextState({ chatHistory: toHistory(messages) });
    return contextText.tokenize(this.model.tokenizer).length;
  }

  info(): GeneratorInfo {
    return structuredClone(this.infoView);
  }

  /** The deadline counts from the call, waiting included: no client waits past INFERENCE_TIMEOUT_SECONDS. */
  async generate(messages: ChatMessage[], options: GenerateOptions): Promise<GenerationResult> {
    if (this.closed) throw new Error('the chat model is closed');
    const promptTokens = this.countPromptTokens(messages);
    const deadline = new GenerationDeadline(this.timeoutSeconds, options.signal);
    const cancelled: GenerationResult = { text: '', promptTokens, completionTokens: 0, stopReason: 'cancelled' };
    try {
      let release: () => void;
      try {
        release = await this.queue.acquire(deadline.signal);
      } catch (err) {
        if (deadline.timedOut) throw new GenerationTimeoutError(deadline.seconds);
        if (err instanceof GeneratorBusyError || !deadline.signal.aborted) throw err;
        return cancelled;
      }
      this.running = deadline;
      let text = '';
      let completionTokens = 0;
      try {
        const response = await this.chat.generateResponse(toHistory(messages), {
          maxTokens: options.maxTokens,
          temperature: options.temperature,
          signal: deadline.signal,
          stopOnAbortSignal: true,
          onTextChunk: (chunk) => {
            text += chunk;
            options.onToken?.(chunk);
          },
          onToken: (tokens) => {
            completionTokens += tokens.length;
          },
        });
        const reason = response.metadata.stopReason;
        if (reason === 'abort' && deadline.timedOut) throw new GenerationTimeoutError(deadline.seconds);
        return { text, promptTokens, completionTokens, stopReason: reason === 'abort' ? 'cancelled' : reason === 'maxTokens' ? 'max_tokens' : 'eos' };
      } catch (err) {
        // An abort during prompt evaluation throws instead of returning a partial response.
        if (deadline.timedOut) throw new GenerationTimeoutError(deadline.seconds);
        if (deadline.signal.aborted) return { ...cancelled, text, completionTokens };
        throw err;
      } finally {
        this.running = null;
        release();
      }
    } finally {
      deadline.dispose();
    }
  }

  /** Refuses the waiting requests, stops the running one, then frees the model. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue.drain(new Error('the chat model is closing'));
    this.running?.abort();
    // Disposing a context mid-evaluation is not safe: wait for the sequence to go idle.
    await this.queue.idle();
    this.chat.dispose();
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}
