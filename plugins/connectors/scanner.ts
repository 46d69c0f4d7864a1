import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../../core/clock.js';
import { type JobContext, JobCancelled, JobFailure } from '../../core/jobs/runner.js';
import { CANCELLED_REASON, type DocumentsService } from '../documents/service.js';
import type { RunSummary } from '../documents/run-summary.js';
import { recordRun, SourceRunTally } from '../documents/source-run.js';
import type { IngestionPipeline } from '../ingestion/pipeline.js';
import { type AllowedPaths, isInside } from './allowed-paths.js';
import { walkDirectory } from './directory-walk.js';
import type { ConnectorRow, ConnectorsRepository } from './repository.js';

const SCAN_WORDS = { item: 'files', excluded: 'links outside CONNECTOR_ALLOWED_PATHS skipped', unreadable: 'unreadable' } as const;

/**
 * The work of one connector scan, inside one job: walk the folder, register each file (unchanged
 * content is skipped by hash), drop documents whose file is gone, then index what changed. The job
 * succeeds only once the changed documents are indexed (or failed with their own reason); its result
 * and the connector's last scan say what it did and what it left out, and why.
 */
export class ConnectorScanner {
  constructor(
    private readonly repository: ConnectorsRepository,
    private readonly allowed: AllowedPaths,
    private readonly documents: DocumentsService,
    private readonly ingestion: IngestionPipeline,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** `requestedAt`: when this scan was asked for; its request ends with it. */
  async scan(connector: ConnectorRow, requestedAt: number, context: JobContext): Promise<void> {
    const tally = new SourceRunTally(SCAN_WORDS);
    const save = async (summary: RunSummary) => {
      const succeeded = summary.state === 'succeeded' ? { last_scan_at: Date.parse(summary.finished_at) } : {};
      await this.repository.update(connector.id, { last_scan: JSON.stringify(summary), ...succeeded });
      await this.repository.endScanRequest(connector.id, requestedAt);
    };
    await recordRun(context, tally, { log: this.log, source: { connector: connector.id }, label: 'connector scan', save }, () => this.walkAndIndex(connector, context, tally));
  }

  private async walkAndIndex(connector: ConnectorRow, context: JobContext, tally: SourceRunTally): Promise<void> {
    const root = await this.resolveRoot(connector);
    const include = JSON.parse(connector.include) as string[];
    const walk = await walkDirectory(root, { recursive: connector.recursive === 1, include }, this.allowed, context.checkpoint);
    tally.add('found', walk.files.length);
    tally.add('excluded', walk.escaping.length);
    tally.add('unreadable', walk.unreadable.length);
    if (walk.escaping.length) this.log.warn({ connector: connector.id, entries: walk.escaping.slice(0, 50) }, 'connector scan skipped links that lead outside CONNECTOR_ALLOWED_PATHS');

    const toIndex: string[] = [];
    const total = walk.files.length;
    try {
      for (const [seen, file] of walk.files.entries()) {
        context.checkpoint();
        await context.progress(seen, total, file.relativePath);
        try {
          const outcome = await this.documents.upsertFromSource({
            sourceType: 'connector', sourceId: connector.id, sourcePath: file.realPath, filename: file.name, filePath: file.realPath, keepCopy: false,
          });
          const document = tally.registered(outcome);
          if (document) toIndex.push(document.id);
        } catch (error) {
          // Vanished or unreadable since the walk: the file's document (if any) is kept as it was.
          tally.add('unreadable');
          this.log.warn({ err: error, connector: connector.id, file: file.relativePath }, 'connector scan could not read a file');
        }
      }
      await context.progress(total, total);
      tally.add('removed', await this.removeGone(connector.id, new Set(walk.files.map((file) => file.realPath)), walk.unlistedDirs));
      context.checkpoint();
    } catch (error) {
      // Left queued after a cancel, they would look unchanged to the next scan and never be indexed (after a stop, the next start resumes them).
      if (error instanceof JobCancelled && !context.interrupted()) await this.failQueued(toIndex);
      throw error;
    }

    await this.ingestion.ingestWithin(toIndex, { ...context, progress: (done, all, current) => context.progress(total + done, total + all, current) });
    await context.progress(total + toIndex.length, total + toIndex.length, tally.text());
  }

  /** The folder is checked again: it may have been removed, unmounted or swapped for a link since it was saved. */
  private async resolveRoot(connector: ConnectorRow): Promise<string> {
    let root: string | null;
    try {
      root = await this.allowed.resolveInside(connector.path);
    } catch {
      // An unmounted disk must not empty the index: documents are kept until the folder is back.
      throw new JobFailure(`The connector's folder ${connector.path} is missing or unreadable; its documents were kept`);
    }
    if (!root) throw new JobFailure(`The connector's folder ${connector.path} is no longer inside CONNECTOR_ALLOWED_PATHS; nothing was read`);
    return root;
  }

  /** Documents whose file was not selected this time (deleted, moved, now excluded), except under folders that could not be listed. */
  private async removeGone(connectorId: string, selected: Set<string>, unlistedDirs: string[]): Promise<number> {
    const documents = await this.documents.repository.listBySource('connector', connectorId);
    const gone = documents
      .filter((document) => document.source_path && !selected.has(document.source_path))
      .filter((document) => !unlistedDirs.some((dir) => isInside(document.source_path!, dir)))
      .map((document) => document.id);
    if (gone.length) await this.ingestion.deleteDocuments(gone);
    return gone.length;
  }

  private async failQueued(ids: string[]): Promise<void> {
    for (const document of await this.documents.repository.findByIds(ids)) {
      if (document.status !== 'indexed') await this.documents.repository.update(document.id, { status: 'failed', error: CANCELLED_REASON, updated_at: clock.now() });
    }
  }
}
