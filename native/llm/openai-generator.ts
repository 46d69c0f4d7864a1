import { createParser } from 'eventsource-parser';
import { GenerationDeadline } from './deadline.js';
import { GenerationTimeoutError, UpstreamError, type BackendCheck, type ChatMessage, type GenerateOptions, type GenerationResult, type Generator, type GeneratorInfo } from './generator.js';
import { silentLog, type LlmLog } from './llm-log.js';

export const DEFAULT_HOSTED_BASE_URL = 'https://api.openai.com/v1';

interface OpenAIGeneratorOptions {
  /** 'hosted': a cloud API with a key; 'inference-server': a llama.cpp server on INFERENCE_URL, no key. */
  backend: 'hosted' | 'inference-server';
  /** The API root ending in /v1; /chat/completions is appended. */
  baseUrl: string;
  apiKey?: string;
  /** Sent as `model`; a llama.cpp server serves its one model whatever the name. */
  model?: string;
  /** N_CTX: a remote context cannot be measured from here, so it is taken as stated. */
  nCtx: number;
  timeoutSeconds: number | (() => number);
  log?: LlmLog;
}

interface Received {
  text: string;
  finish: string | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); undefined when absent or unreadable. */
function retryAfterSeconds(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

const CONNECTION_PROBLEMS = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNRESET', 'connection reset'],
  ['ENOTFOUND', 'host not found'],
  ['EAI_AGAIN', 'host not found'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
]);

/** A connection failure's code in words (the error's own text can carry the URL). */
function connectionProblem(err: unknown): string {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return (code && CONNECTION_PROBLEMS.get(code)) || code || (err as Error).name;
}

/**
 * An OpenAI-compatible chat-completions client (hosted APIs and llama.cpp's server): streams with
 * SSE when onToken is given, plain JSON otherwise. Failures become UpstreamError with a message for
 * the user; the API key goes in the Authorization header only and is never logged or echoed.
 */
export class OpenAIGenerator implements Generator {
  private readonly endpoint: string;
  private readonly label: string;
  private readonly log: LlmLog;
  private readonly inFlight = new Set<GenerationDeadline>();

  constructor(private readonly opts: OpenAIGeneratorOptions) {
    this.endpoint = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.label = opts.backend === 'hosted' ? 'The hosted model' : 'The inference server';
    this.log = opts.log ?? silentLog;
  }

  /** An estimate, not the remote tokenizer: ceil(characters / 4), the usual English average for BPE vocabularies. */
  countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  /** The estimate above per message plus OpenAI's documented chat overhead: 4 tokens a message, 3 to prime the reply. */
  countPromptTokens(messages: ChatMessage[]): number {
    return messages.reduce((sum, m) => sum + 4 + this.countTokens(m.content), 3);
  }

  info(): GeneratorInfo {
    return {
      backend: this.opts.backend,
      model: this.opts.model ?? 'llama.cpp server',
      file: null,
      parameters: null,
      quantisation: null,
      context: { requested: this.opts.nCtx, effective: this.opts.nCtx, trained: null },
      threads: null,
      gpu_layers: null,
      device: 'remote',
    };
  }

  async close(): Promise<void> {
    for (const deadline of this.inFlight) deadline.abort();
  }

  /** GET /models with the key a chat request sends: the cheapest request every OpenAI-compatible server answers. */
  async check(timeoutMs: number): Promise<BackendCheck> {
    let res: Response;
    try {
      res = await fetch(`${this.opts.baseUrl.replace(/\/+$/, '')}/models`, {
        headers: this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {},
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') return { state: 'unreachable', detail: `${this.label} did not answer within ${timeoutMs / 1000} s` };
      return { state: 'unreachable', detail: `${this.label} is unreachable (${connectionProblem(err)})` };
    }
    await res.body?.cancel(); // only the status matters; such bodies may quote the key
    if (res.ok) return { state: 'ok' };
    if (res.status === 401 || res.status === 403) {
      return { state: 'failing', detail: this.opts.backend === 'hosted' ? `The hosted model rejected the API key (HTTP ${res.status})` : `The inference server refused the request (HTTP ${res.status}, it expects credentials)` };
    }
    return { state: 'failing', detail: `${this.label} answered HTTP ${res.status}` };
  }

  async generate(messages: ChatMessage[], options: GenerateOptions): Promise<GenerationResult> {
    const deadline = new GenerationDeadline(this.opts.timeoutSeconds, options.signal);
    this.inFlight.add(deadline);
    const stream = !!options.onToken;
    const partial: Received = { text: '', finish: null };
    try {
      const res = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
        },
        body: JSON.stringify({
          ...(this.opts.model ? { model: this.opts.model } : {}),
          messages,
          max_tokens: options.maxTokens,
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
          stream,
          ...(stream ? { stream_options: { include_usage: true } } : {}),
        }),
        signal: deadline.signal,
      });
      if (!res.ok) throw await this.statusError(res);
      if (stream) await this.readStream(res, partial, options.onToken!);
      else await this.readJson(res, partial);
      return this.result(messages, partial, partial.finish === 'length' ? 'max_tokens' : 'eos');
    } catch (err) {
      if (deadline.timedOut) throw new GenerationTimeoutError(deadline.seconds);
      if (deadline.signal.aborted) return this.result(messages, partial, 'cancelled');
      if (err instanceof UpstreamError) throw err;
      // Only the error code: a raw fetch error can carry the request (and so the URL) in its text.
      this.log.warn(`${this.label} at ${new URL(this.endpoint).host} is unreachable (${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name})`);
      throw new UpstreamError(502, `${this.label} is unreachable`);
    } finally {
      deadline.dispose();
      this.inFlight.delete(deadline);
    }
  }

  private result(messages: ChatMessage[], partial: Received, stopReason: GenerationResult['stopReason']): GenerationResult {
    return {
      text: partial.text,
      promptTokens: partial.usage?.prompt_tokens ?? this.countPromptTokens(messages),
      completionTokens: partial.usage?.completion_tokens ?? this.countTokens(partial.text),
      stopReason,
    };
  }

  private redact(text: string): string {
    const key = this.opts.apiKey;
    return (key ? text.split(key).join('[redacted]') : text).slice(0, 300);
  }

  private async statusError(res: Response): Promise<UpstreamError> {
    const status = res.status;
    const body = await res.text().catch(() => '');
    if (status === 401 || status === 403) {
      // Such bodies quote parts of the key: they are not logged at all.
      this.log.warn(`${this.label} refused the credentials (HTTP ${status})`);
      return new UpstreamError(status, this.opts.backend === 'hosted' ? 'The hosted model rejected the API key' : `The inference server refused the request (HTTP ${status})`);
    }
    this.log.warn(`${this.label} answered HTTP ${status}: ${this.redact(body)}`);
    if (status === 429) {
      const retry = retryAfterSeconds(res.headers.get('retry-after'));
      return new UpstreamError(429, `${this.label} is rate limiting requests${retry !== undefined ? `; retry in ${retry} s` : ''}`, retry);
    }
    if (status >= 500) return new UpstreamError(status, `${this.label} is unavailable (HTTP ${status})`);
    return new UpstreamError(status, `${this.label} rejected the request (HTTP ${status})`);
  }

  private malformed(what: string): UpstreamError {
    this.log.warn(`${this.label} sent ${this.redact(what)}`);
    return new UpstreamError(502, `${this.label} sent an answer that is not an OpenAI chat completion`);
  }

  private async readJson(res: Response, partial: Received): Promise<void> {
    const raw = await res.text();
    let body: { choices?: { message?: { content?: unknown }; finish_reason?: string }[]; usage?: Received['usage'] };
    try {
      body = JSON.parse(raw);
    } catch {
      throw this.malformed(`non-JSON: ${raw}`);
    }
    const choice = body.choices?.[0];
    if (typeof choice?.message?.content !== 'string') throw this.malformed(`no choices[0].message.content: ${raw}`);
    partial.text = choice.message.content;
    partial.finish = choice.finish_reason ?? null;
    partial.usage = body.usage;
  }

  /** `data: {choices:[{delta:{content}}]}` events until `data: [DONE]`; an `error` object mid-stream fails the answer. */
  private async readStream(res: Response, partial: Received, onToken: (text: string) => void): Promise<void> {
    let done = false as boolean;
    let failure = null as UpstreamError | null;
    const parser = createParser({
      onEvent: (event) => {
        if (done || failure) return;
        if (event.data.trim() === '[DONE]') {
          done = true;
          return;
        }
        let chunk: { choices?: { delta?: { content?: unknown }; finish_reason?: string | null }[]; usage?: Received['usage']; error?: unknown };
        try {
          chunk = JSON.parse(event.data);
        } catch {
          failure = this.malformed(`a non-JSON event: ${event.data}`);
          return;
        }
        if (chunk.error) {
          this.log.warn(`${this.label} failed mid-stream: ${this.redact(JSON.stringify(chunk.error))}`);
          failure = new UpstreamError(502, `${this.label} failed while answering`);
          return;
        }
        if (chunk.usage) partial.usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (typeof choice?.delta?.content === 'string' && choice.delta.content) {
          partial.text += choice.delta.content;
          onToken(choice.delta.content);
        }
        if (choice?.finish_reason) partial.finish = choice.finish_reason;
      },
    });
    const decoder = new TextDecoder();
    for await (const bytes of (res.body ?? []) as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(bytes, { stream: true }));
      if (failure) throw failure;
      if (done) return;
    }
    if (!partial.finish) throw new UpstreamError(502, `${this.label} closed the stream before the answer was complete`);
  }
}
