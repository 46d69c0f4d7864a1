/** One AbortSignal per generation: the caller's (client gone) or INFERENCE_TIMEOUT_SECONDS, whichever fires first. */
export class GenerationDeadline {
  readonly seconds: number;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private expired = false;
  private readonly cancel = () => this.controller.abort();

  constructor(timeoutSeconds: number | (() => number), private readonly caller?: AbortSignal) {
    this.seconds = typeof timeoutSeconds === 'function' ? timeoutSeconds() : timeoutSeconds;
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, this.seconds * 1000);
    caller?.addEventListener('abort', this.cancel, { once: true });
    if (caller?.aborted) this.controller.abort();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True when the deadline, not the caller, stopped the generation. */
  get timedOut(): boolean {
    return this.expired;
  }

  abort(): void {
    this.controller.abort();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.cancel);
  }
}
