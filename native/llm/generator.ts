/**
 * A chat-model backend: messages in, text out (streamed token by token through onToken). The rest
 * of the code sees only this interface; node-llama-cpp and HTTP clients stay inside native/llm.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerateOptions {
  maxTokens: number;
  temperature?: number;
  /** Aborts the generation (client disconnected): the result ends with stopReason 'cancelled'. */
  signal?: AbortSignal;
  /** Called with each new piece of text as it is produced. */
  onToken?: (text: string) => void;
}

export interface GenerationResult {
  text: string;
  promptTokens: number;
  completionTokens: number;
  stopReason: 'eos' | 'max_tokens' | 'cancelled';
}

export interface GeneratorInfo {
  backend: 'local' | 'hosted' | 'inference-server';
  model: string;
  /** GGUF facts of a local model; null for remote backends. */
  file: string | null;
  parameters: number | null;
  quantisation: string | null;
  context: { requested: number; effective: number; trained: number | null };
  threads: number | null;
  gpu_layers: number | null;
  device: 'cpu' | 'cuda' | 'remote';
}

/** Thrown when the wait queue is full: answer 503 with Retry-After. */
export class GeneratorBusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('The model is busy; retry shortly');
  }
}

/** Thrown when a generation runs past INFERENCE_TIMEOUT_SECONDS. */
export class GenerationTimeoutError extends Error {
  constructor(seconds: number) {
    super(`The model did not finish within ${seconds} s`);
  }
}

/** A failure of a remote backend, already phrased for the user (no key, no internals). */
export class UpstreamError extends Error {
  constructor(readonly status: number, message: string, readonly retryAfterSeconds?: number) {
    super(message);
  }
}

/** Whether a remote backend answers now, as a user sending a chat request would find it. */
export interface BackendCheck {
  /** ok: it answers; unreachable: no connection, or no answer in time; failing: it answers, but with an error (credentials, its own failure). */
  state: 'ok' | 'unreachable' | 'failing';
  /** One line for humans: never the URL or the key. */
  detail?: string;
}

export interface Generator {
  /** Tokens of the prompt these messages make, after the model's chat template (the token budget uses it). */
  countPromptTokens(messages: ChatMessage[]): number;
  countTokens(text: string): number;
  generate(messages: ChatMessage[], options: GenerateOptions): Promise<GenerationResult>;
  info(): GeneratorInfo;
  /** Remote backends only: asks the server whether it answers, within timeoutMs. An in-process model that loaded has nothing to ask. */
  check?(timeoutMs: number): Promise<BackendCheck>;
  close(): Promise<void>;
}
