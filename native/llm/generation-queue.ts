import { GeneratorBusyError } from './generator.js';

interface Waiter {
  grant: () => void;
  fail: (reason: unknown) => void;
}

/**
 * First-come, first-served admission to the one context sequence: one generation runs, up to
 * `maxWaiting` wait their turn, and the next one is refused with GeneratorBusyError.
 */
export class GenerationQueue {
  private running = false;
  private readonly waiting: Waiter[] = [];
  /** Recent run time in seconds (moving average), to tell a refused client when to come back. */
  private averageRunSeconds = 5;
  private startedAt = 0;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(private readonly maxWaiting: number) {}

  get depth(): number {
    return this.waiting.length + (this.running ? 1 : 0);
  }

  /** Resolves with a release function once it is this caller's turn; an aborted signal leaves the line. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (!this.running && !this.waiting.length) return Promise.resolve(this.start());
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(new GeneratorBusyError(Math.min(300, Math.max(1, Math.ceil(this.averageRunSeconds * (this.waiting.length + 1))))));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.start());
        },
        fail: reject,
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Fails everyone still waiting (the model is closing). */
  drain(reason: Error): void {
    for (const waiter of this.waiting.splice(0)) waiter.fail(reason);
  }

  /** Resolves once nothing runs (close() waits for it before freeing the model). */
  idle(): Promise<void> {
    return this.running ? new Promise((resolve) => this.idleWaiters.push(resolve)) : Promise.resolve();
  }

  private start(): () => void {
    this.running = true;
    this.startedAt = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.averageRunSeconds = 0.7 * this.averageRunSeconds + 0.3 * ((performance.now() - this.startedAt) / 1000);
      const next = this.waiting.shift();
      if (next) next.grant();
      else {
        this.running = false;
        for (const resolve of this.idleWaiters.splice(0)) resolve();
      }
    };
  }
}
