import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../../core/clock.js';
import { type JobContext, JobFailure } from '../../core/jobs/runner.js';
import { type DocumentRow, type DocumentsService, type RunIndexer, SourceRun } from '../documents/index.js';
import type { RunSummary } from '../jobs/index.js';
import { CrawlFailure, type CrawlEvent, type Credentials, type PreviousPage, type WebConfig, WebCrawler } from './crawler.js';
import type { IntegrationPageRow, IntegrationRow, IntegrationsRepository } from './repository.js';
import type { Network } from '../../core/net/ssrf-guard.js';

interface SyncDependencies {
  repository: IntegrationsRepository;
  documents: DocumentsService;
  ingestion: RunIndexer;
  dataDir: string;
  log: FastifyBaseLogger;
  network?: Network;
}

const SYNC_WORDS = { item: 'pages', excluded: 'not crawled (robots.txt, off the site, refused, or gone)', unreadable: 'unreachable' } as const;

/** A URL as it may appear in a log line: a query string can carry a token. */
const loggable = (url: string) => url.split('?')[0];

/**
 * One sync of a web integration, run as a job (a SourceRun): crawl, register new and changed pages
 * as documents, and remove the documents of pages that are gone; the run then indexes them in the
 * same job. A crawl that cannot start (robots.txt or the start URL unreadable) fails the job and
 * removes nothing.
 */
export class IntegrationSync {
  private readonly seen = new Set<string>();
  private readonly run: SourceRun;
  private pages = new Map<string, IntegrationPageRow>();
  private documents = new Map<string, DocumentRow>();

  constructor(
    private readonly deps: SyncDependencies,
    private readonly integration: IntegrationRow,
    /** Opened inside the run, so that a failure to decrypt them is the run's recorded failure. */
    private readonly credentials: () => Credentials | null,
    /** When this sync was asked for: its request ends with it. */
    requestedAt: number,
  ) {
    const id = integration.id;
    this.run = new SourceRun({
      documents: deps.documents,
      indexer: deps.ingestion,
      source: { type: 'integration', id },
      words: SYNC_WORDS,
      log: deps.log,
      label: 'integration sync',
      save: async (summary: RunSummary) => {
        const succeeded = summary.state === 'succeeded' ? { last_sync_at: Date.parse(summary.finished_at) } : {};
        await deps.repository.update(id, { last_sync: JSON.stringify(summary), ...succeeded });
        await deps.repository.endSyncRequest(id, requestedAt);
      },
    });
  }

  /** The sync, recorded: the job's result and the integration's last sync say what it did and left out. */
  sync(context: JobContext): Promise<void> {
    return this.run.run(context, () => this.crawl(context));
  }

  private async crawl(context: JobContext): Promise<void> {
    const id = this.integration.id;
    this.pages = new Map((await this.deps.repository.pages(id)).map((page) => [page.url, page]));
    this.documents = new Map((await this.deps.documents.ofSource('integration', id)).map((doc) => [doc.id, doc]));
    const crawlDir = path.join(this.deps.dataDir, 'integrations');
    await mkdir(crawlDir, { recursive: true, mode: 0o700 });
    const tmpDir = await mkdtemp(path.join(crawlDir, 'crawl-'));
    try {
      const crawler = new WebCrawler({
        config: JSON.parse(this.integration.config) as WebConfig,
        credentials: this.credentials(),
        previous: (url) => this.previous(url),
        tmpDir,
        signal: context.signal,
        network: this.deps.network,
        onProgress: (fetched, known, url) => context.progress(fetched, known, loggable(url)),
      });
      for await (const event of crawler.crawl()) {
        context.checkpoint();
        await this.record(event);
      }
    } catch (error) {
      if (!(await this.deps.repository.find(id))) return this.discardAll();
      if (error instanceof CrawlFailure) throw new JobFailure(error.message);
      throw error;
    } finally {
      await rm(tmpDir, { recursive: true, force: true });
    }
    if (!(await this.deps.repository.find(id))) return this.discardAll();
    await this.removeUnseen();
  }

  /** Validators are sent only while an indexed copy is kept: a 304 must leave something to read links from. */
  private previous(url: string): PreviousPage | undefined {
    const page = this.pages.get(url);
    if (!page) return undefined;
    const document = page.document_id ? this.documents.get(page.document_id) : undefined;
    const storedCopy = document?.status === 'indexed' ? this.deps.documents.storagePathOf(document) : null;
    return { etag: page.etag, lastModified: page.last_modified, storedCopy };
  }

  private async record(event: CrawlEvent): Promise<void> {
    switch (event.kind) {
      case 'not_modified': {
        this.seen.add(event.url);
        this.run.tally.add('found');
        this.run.tally.add('unchanged');
        const page = this.pages.get(event.url)!;
        await this.deps.repository.savePage({ ...page, fetched_at: clock.now() });
        return;
      }
      case 'unreachable':
        this.run.tally.add('unreadable');
        // A passing outage must not empty the index: what was there stays until the page is really gone.
        if (this.pages.has(event.url)) this.seen.add(event.url);
        this.deps.log.warn({ integration: this.integration.id, url: loggable(event.url), reason: event.reason }, 'integration page unreachable');
        return;
      case 'skipped':
        if (event.tooLarge) this.run.tally.skip('too_large');
        else this.run.tally.add('excluded');
        this.deps.log.debug({ integration: this.integration.id, url: loggable(event.url), reason: event.reason }, 'integration page skipped');
        return;
      case 'fetched':
        return this.register(event);
    }
  }

  private async register(event: Extract<CrawlEvent, { kind: 'fetched' }>): Promise<void> {
    this.run.tally.add('found');
    const result = await this.run.register({ sourcePath: event.url, filename: event.filename, filePath: event.file, keepCopy: true });
    await rm(event.file, { force: true });
    if ('skipped' in result) {
      this.deps.log.debug({ integration: this.integration.id, url: loggable(event.url), reason: result.detail }, 'integration page not indexed');
      return;
    }
    this.seen.add(event.url);
    await this.deps.repository.savePage({
      integration_id: this.integration.id,
      url: event.url,
      etag: event.etag,
      last_modified: event.lastModified,
      sha256: result.document.sha256,
      document_id: result.document.id,
      fetched_at: clock.now(),
    });
  }

  /** Pages gone (404/410), no longer linked, or no longer indexable lose their documents and records. */
  private async removeUnseen(): Promise<void> {
    await this.run.removeWhere((doc) => !doc.source_path || !this.seen.has(doc.source_path));
    await this.deps.repository.deletePages(this.integration.id, [...this.pages.keys()].filter((url) => !this.seen.has(url)));
  }

  /** The integration was deleted while this sync ran: what it registered goes too. */
  private async discardAll(): Promise<void> {
    await this.run.removeWhere(() => true);
  }
}
