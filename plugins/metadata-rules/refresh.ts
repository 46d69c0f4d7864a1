import type { JobContext } from '../../core/jobs/runner.js';
import type { DocumentsService } from '../documents/index.js';
import type { IndexStore } from '../search-index/index.js';
import type { IngestionPipeline } from '../ingestion/index.js';
import type { RuleSet } from './rule-engine.js';
import type { RefreshResult } from './schemas.js';
import type { RuleSource } from './service.js';

/**
 * POST …/refresh: re-applies a source's rules to its documents. A document chunked under the same
 * boundaries gets its values again from its stored chunks (nothing re-embedded); one whose boundaries
 * changed is indexed again by ingestion, which re-embeds only the chunks whose text changed.
 */
export class RefreshJob {
  constructor(
    private readonly documents: DocumentsService,
    private readonly store: IndexStore,
    private readonly ingestion: IngestionPipeline,
  ) {}

  /** `rules`: the source's rules in force (null: none, or the plan lapsed and the values are cleared). */
  async run(source: RuleSource, rules: RuleSet | null, active: boolean, context: JobContext): Promise<void> {
    const ids = await this.documents.idsOfSource(source.type, source.documentSourceId);
    const result: RefreshResult = { documents: ids.length, relabelled: 0, rechunked: 0, chunks: 0, active };
    const rechunk: string[] = [];
    const boundaryKey = rules?.boundaryKey() ?? '';
    for (const [done, id] of ids.entries()) {
      context.checkpoint();
      await context.progress(done, ids.length, id);
      const document = await this.documents.find(id);
      if (!document || document.status !== 'indexed') continue;
      if (((await this.store.boundaryKeyOf(id)) ?? '') !== boundaryKey) {
        rechunk.push(id);
        continue;
      }
      const chunks = await this.store.chunkTextsOf(id);
      const labels = rules ? rules.label(document.filename, chunks) : { values: chunks.map(() => []), hits: chunks.map(() => []) };
      await this.store.replaceMetadata({ documentId: id, rowids: chunks.map((chunk) => chunk.rowid), ...labels, boundaryKey });
      result.relabelled++;
      result.chunks += chunks.length;
    }
    await context.progress(ids.length - rechunk.length, ids.length);
    if (rechunk.length) {
      await this.ingestion.ingestWithin(rechunk, context);
      result.rechunked = rechunk.length;
    }
    context.report(result);
  }
}
