import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../../core/clock.js';
import { INTERNAL_ERROR, type JobContext, JobCancelled, JobFailure } from '../../core/jobs/runner.js';
import { needsIndexing } from './lifecycle.js';
import type { DocumentRow } from './repository.js';
import { type RunSummary, SKIP_REASONS, type SkipReason } from '../jobs/index.js';
import type { DocumentsService, SourceFile, SourceUpsert } from './service.js';

type Counted = 'found' | 'changed' | 'unchanged' | 'removed' | 'unreadable' | 'excluded';

/** How a source names what it reads, in a summary's words: a connector lists files, an integration fetches pages. */
interface RunWords {
  item: 'files' | 'pages';
  /** After the count of excluded items, e.g. "links outside CONNECTOR_ALLOWED_PATHS skipped". */
  excluded: string;
  /** After the count of unreadable items: "unreadable" or "unreachable". */
  unreadable: string;
}

const SKIP_WORDS: Record<SkipReason, string> = {
  plan_document_limit: "over the plan's document limit",
  plan_storage_limit: "over the plan's storage limit",
  tier_required: 'of a type a higher plan indexes',
  unsupported_type: 'of an unsupported type',
  too_large: 'too large',
};

/** The counts of one connector scan or integration sync as it goes, and its summary at the end. */
class SourceRunTally {
  private readonly counts: Record<Counted, number> = { found: 0, changed: 0, unchanged: 0, removed: 0, unreadable: 0, excluded: 0 };
  private readonly skipped = Object.fromEntries(SKIP_REASONS.map((reason) => [reason, 0])) as Record<SkipReason, number>;
  /** What would lift the skips a licence can lift (plan limits, tier gates), each said once. */
  private readonly remedies = new Set<string>();

  constructor(private readonly words: RunWords) {}

  add(what: Counted, count = 1): void {
    this.counts[what] += count;
  }

  count(what: Counted): number {
    return this.counts[what];
  }

  skip(reason: SkipReason, remedy?: string): void {
    this.skipped[reason]++;
    if (remedy) this.remedies.add(remedy);
  }

  /** Counts what registering a file or page did; returns its document when this run must index it. */
  registered(outcome: SourceUpsert): DocumentRow | null {
    if ('skipped' in outcome) {
      this.skip(outcome.skipped, outcome.remedy);
      return null;
    }
    this.counts[outcome.changed ? 'changed' : 'unchanged']++;
    // Unchanged too when an interrupted or cancelled run left its document unindexed.
    return outcome.changed || needsIndexing(outcome.document) ? outcome.document : null;
  }

  /** What to do about the skips a licence would lift, or null when there were none. */
  remedy(): string | null {
    // "apply a PRO licence" goes without saying beside "delete documents or apply a PRO licence".
    const all = [...this.remedies];
    const needed = all.filter((remedy) => !all.some((other) => other !== remedy && other.includes(remedy)));
    return needed.length ? needed.join('; ') : null;
  }

  /** The run in words: the counts, then what was not indexed and why, and the remedy. */
  text(): string {
    const { found, changed, unchanged, removed, excluded, unreadable } = this.counts;
    let text = `${found} ${this.words.item}, ${changed} new or changed, ${unchanged} unchanged, ${removed} removed`;
    if (excluded) text += `, ${excluded} ${this.words.excluded}`;
    if (unreadable) text += `, ${unreadable} ${this.words.unreadable}`;
    const skips = SKIP_REASONS.filter((reason) => this.skipped[reason] > 0).map((reason) => `${this.skipped[reason]} ${SKIP_WORDS[reason]}`);
    if (skips.length) text += `; ${this.skippedTotal()} not indexed: ${skips.join(', ')}`;
    const remedy = this.remedy();
    if (remedy) text += `. To index them: ${remedy}`;
    return text;
  }

  summarise(state: RunSummary['state'], error?: string): RunSummary {
    return {
      state,
      ...(error ? { error } : {}),
      finished_at: clock.iso(),
      summary: this.text(),
      ...this.counts,
      skipped: { ...this.skipped },
      skipped_total: this.skippedTotal(),
    };
  }

  private skippedTotal(): number {
    return SKIP_REASONS.reduce((sum, reason) => sum + this.skipped[reason], 0);
  }
}

/** What indexes a run's documents inside its job: the ingestion pipeline (app.ingestion). */
export interface RunIndexer {
  ingestWithin(documentIds: string[], context: JobContext): Promise<void>;
}

export interface SourceRunOptions {
  documents: DocumentsService;
  indexer: RunIndexer;
  source: { type: 'connector' | 'integration'; id: string };
  words: RunWords;
  log: FastifyBaseLogger;
  /** "connector scan" or "integration sync". */
  label: string;
  /** Keeps the summary as the source's last run and ends the request the run served. */
  save(summary: RunSummary): Promise<void>;
}

/** A file or page of the source, as the run registers it. */
type RunFile = Omit<SourceFile, 'sourceType' | 'sourceId'>;

/**
 * One connector scan or integration sync, the skeleton both share: the source lists its files or
 * pages and registers each (register), the documents of those gone are removed (removeWhere), then
 * what is new, changed or not indexed yet is indexed in the same job, so that the job ends once the
 * source's documents are searchable. Its result and the source's last run say what it did and what
 * it left out, and why.
 */
export class SourceRun {
  readonly tally: SourceRunTally;
  private readonly toIndex = new Set<string>();

  constructor(private readonly options: SourceRunOptions) {
    this.tally = new SourceRunTally(options.words);
  }

  /** Runs `collect` (list, register, remove what is gone), then indexes what it registered; records how the run ended. */
  async run(context: JobContext, collect: () => Promise<void>): Promise<void> {
    await recordRun(context, this.tally, this.options, async () => {
      try {
        await collect();
        context.checkpoint();
      } catch (error) {
        // Left queued after a cancel, they would wait for the next run (after a stop, the next start resumes them).
        if (error instanceof JobCancelled && !context.interrupted()) await this.options.documents.cancelled([...this.toIndex]);
        throw error;
      }
      await this.index(context);
    });
  }

  /** Registers a file or page as a document: counted, and kept for indexing when it must be. */
  async register(file: RunFile): Promise<SourceUpsert> {
    const { type, id } = this.options.source;
    const outcome = await this.options.documents.upsertFromSource({ sourceType: type, sourceId: id, ...file });
    const document = this.tally.registered(outcome);
    if (document) this.toIndex.add(document.id);
    return outcome;
  }

  /** Removes the documents of the source that `gone` picks (their file or page is gone or no longer selected). */
  async removeWhere(gone: (document: DocumentRow) => boolean): Promise<void> {
    const { type, id } = this.options.source;
    const ids = (await this.options.documents.ofSource(type, id)).filter(gone).map((document) => document.id);
    if (ids.length) await this.options.documents.remove(ids);
    for (const removed of ids) this.toIndex.delete(removed);
    this.tally.add('removed', ids.length);
  }

  /** Indexing's progress counts on after the items listed, and the last progress says what the run did. */
  private async index(context: JobContext): Promise<void> {
    const listed = this.tally.count('found');
    const ids = [...this.toIndex];
    await this.options.indexer.ingestWithin(ids, { ...context, progress: (done, all, current) => context.progress(listed + done, listed + all, current) });
    await context.progress(listed + ids.length, listed + ids.length, this.tally.text());
  }
}

/**
 * Runs one scan or sync and records how it ended: the job's result, the source's last run, and a
 * warning naming the remedy when a plan limit or tier gate skipped anything. A run that a stop of
 * the service interrupts records nothing: it is still requested, and the next start runs it again.
 */
async function recordRun(context: JobContext, tally: SourceRunTally, record: SourceRunOptions, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!context.interrupted()) await finish(context, tally, record, error);
    throw error;
  }
  await finish(context, tally, record);
}

async function finish(context: JobContext, tally: SourceRunTally, record: SourceRunOptions, error?: unknown): Promise<void> {
  const summary = error === undefined
    ? tally.summarise('succeeded')
    : tally.summarise(error instanceof JobCancelled ? 'cancelled' : 'failed', error instanceof JobCancelled ? undefined : error instanceof JobFailure ? error.message : INTERNAL_ERROR);
  context.report(summary);
  await record.save(summary);
  const { summary: words, ...counts } = summary;
  const source = { [record.source.type]: record.source.id };
  // The words name the remedy: the admin who reads the log learns what to do.
  if (tally.remedy()) record.log.warn({ ...source, ...counts }, `${record.label} left work out for plan or tier reasons: ${words}`);
  else record.log.info({ ...source, ...counts }, `${record.label} finished`);
}
