import type { SqliteKeywordIndex } from './keyword-index.sqlite.js';

/** Pages of merge work per step: a few milliseconds of the event loop at a time. */
const MERGE_PAGES = 64;

/**
 * Merges the keyword index's segments in bounded steps, yielding to requests between steps, once
 * writes have happened since the last merge. Returns the steps taken (0: nothing had changed).
 */
export class KeywordIndexMerger {
  private mergedAt = -1;
  private widthSet = false;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(private readonly repository: SqliteKeywordIndex) {}

  compact(): Promise<number> {
    return (this.running ??= this.mergeAll().finally(() => (this.running = null)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => undefined);
  }

  private async mergeAll(): Promise<number> {
    if ((await this.repository.writes()) === this.mergedAt) return 0;
    // A setting FTS5 stores with the index: once per process is enough.
    if (!this.widthSet) await this.repository.setKeywordMergeWidth();
    this.widthSet = true;
    let steps = 0;
    while (!this.stopped && (await this.repository.mergeKeywordIndexStep(MERGE_PAGES))) {
      steps++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (!this.stopped) this.mergedAt = await this.repository.writes();
    return steps;
  }
}
