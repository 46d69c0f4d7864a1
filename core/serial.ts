/**
 * Runs async tasks one at a time, in the order they were handed in: a check and the write it guards (is this file
 * already stored? is the plan full?) cannot interleave with another request's. A failed task does not stop the next.
 * In-process only: one service owns a DATA_DIR. (A promise chain of a few lines; no dependency for it.)
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every task handed in so far has ended, whether it succeeded or not. */
  async settled(): Promise<void> {
    await this.tail;
  }
}
