import type { FastifyBaseLogger } from 'fastify';
import { type JobContext, JobFailure } from '../../core/jobs/runner.js';
import { type DocumentsService, type RunIndexer, SourceRun } from '../documents/index.js';
import type { RunSummary } from '../jobs/index.js';
import { type AllowedPaths, isInside } from './allowed-paths.js';
import { walkDirectory } from './directory-walk.js';
import type { ConnectorRow, ConnectorsRepository } from './repository.js';

const SCAN_WORDS = { item: 'files', excluded: 'links outside CONNECTOR_ALLOWED_PATHS skipped', unreadable: 'unreadable' } as const;

/**
 * The work of one connector scan, inside one job (a SourceRun): walk the folder, register each file
 * (unchanged content is skipped by hash), drop documents whose file is gone; the run then indexes
 * what changed. The job succeeds only once the changed documents are indexed (or failed with their
 * own reason); its result and the connector's last scan say what it did and what it left out, and why.
 */
export class ConnectorScanner {
  constructor(
    private readonly repository: ConnectorsRepository,
    private readonly allowed: AllowedPaths,
    private readonly documents: DocumentsService,
    private readonly indexer: RunIndexer,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** `requestedAt`: when this scan was asked for; its request ends with it. */
  async scan(connector: ConnectorRow, requestedAt: number, context: JobContext): Promise<void> {
    const run = new SourceRun({
      documents: this.documents,
      indexer: this.indexer,
      source: { type: 'connector', id: connector.id },
      words: SCAN_WORDS,
      log: this.log,
      label: 'connector scan',
      save: async (summary: RunSummary) => {
        const succeeded = summary.state === 'succeeded' ? { last_scan_at: Date.parse(summary.finished_at) } : {};
        await this.repository.update(connector.id, { last_scan: JSON.stringify(summary), ...succeeded });
        await this.repository.endScanRequest(connector.id, requestedAt);
      },
    });
    await run.run(context, () => this.walk(connector, context, run));
  }

  private async walk(connector: ConnectorRow, context: JobContext, run: SourceRun): Promise<void> {
    const root = await this.resolveRoot(connector);
    const include = JSON.parse(connector.include) as string[];
    const walk = await walkDirectory(root, { recursive: connector.recursive === 1, include }, this.allowed, context.checkpoint);
    run.tally.add('found', walk.files.length);
    run.tally.add('excluded', walk.escaping.length);
    run.tally.add('unreadable', walk.unreadable.length);
    if (walk.escaping.length) this.log.warn({ connector: connector.id, entries: walk.escaping.slice(0, 50) }, 'connector scan skipped links that lead outside CONNECTOR_ALLOWED_PATHS');

    const total = walk.files.length;
    for (const [seen, file] of walk.files.entries()) {
      context.checkpoint();
      await context.progress(seen, total, file.relativePath);
      try {
        await run.register({ sourcePath: file.realPath, filename: file.name, filePath: file.realPath, keepCopy: false });
      } catch (error) {
        // Vanished or unreadable since the walk: the file's document (if any) is kept as it was.
        run.tally.add('unreadable');
        this.log.warn({ err: error, connector: connector.id, file: file.relativePath }, 'connector scan could not read a file');
      }
    }
    await context.progress(total, total);
    // Gone: not selected this time (deleted, moved, now excluded), except under folders that could not be listed.
    const selected = new Set(walk.files.map((file) => file.realPath));
    await run.removeWhere((document) => !!document.source_path && !selected.has(document.source_path) && !walk.unlistedDirs.some((dir) => isInside(document.source_path!, dir)));
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
}
