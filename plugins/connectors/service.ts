import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Updateable } from 'kysely';
import { clock } from '../../core/clock.js';
import type { ConnectorsTable } from '../../core/db/documents-schema.js';
import { conflict, notFound } from '../../core/errors.js';
import { UniqueName } from '../../core/unique-name.js';
import type { Job } from '../../core/jobs/job.js';
import { type JobContext, JobCancelled, type JobRunner } from '../../core/jobs/runner.js';
import type { DocumentsService } from '../documents/index.js';
import { readableRow } from '../groups/index.js';
import type { RunSummary } from '../jobs/index.js';
import type { AllowedPaths } from './allowed-paths.js';
import type { ConnectorRow, ConnectorsRepository, ConnectorViewRow } from './repository.js';
import type { ConnectorScanner } from './scanner.js';
import type { ConnectorView, CreateConnectorBody, UpdateConnectorBody } from './schemas.js';

export const SCAN_JOB_TYPE = 'connector.scan';

export function toConnectorView(row: ConnectorViewRow): ConnectorView {
  return {
    id: row.id,
    name: row.name,
    path: row.path,
    recursive: row.recursive === 1,
    include: JSON.parse(row.include) as string[],
    enabled: row.enabled === 1,
    last_scan_at: row.last_scan_at === null ? null : clock.iso(row.last_scan_at),
    last_scan: row.last_scan === null ? null : (JSON.parse(row.last_scan) as RunSummary),
    document_count: Number(row.document_count),
    created_at: clock.iso(row.created_at),
    updated_at: clock.iso(row.updated_at),
  };
}

/** ".PDF", "pdf" and ".pdf" are one extension. */
function normaliseInclude(include: string[]): string[] {
  return [...new Set(include.map((extension) => `.${extension.replace(/^\./, '').toLowerCase()}`))];
}


/** The rules of local-directory connectors: CRUD with path checks, and scans as jobs. */
export class ConnectorsService {
  /** Connectors deleted while a scan of theirs may still be queued or running: the scan stops at its next checkpoint. */
  private readonly deleted = new Set<string>();
  /** What other plugins keep per connector (its metadata rules), dropped after a delete. */
  private readonly deleteListeners: Array<(id: string) => Promise<void>> = [];
  private readonly names: UniqueName;

  constructor(
    private readonly repository: ConnectorsRepository,
    private readonly allowed: AllowedPaths,
    private readonly scanner: ConnectorScanner,
    private readonly documents: DocumentsService,
    private readonly jobs: JobRunner,
    private readonly log: FastifyBaseLogger,
  ) {
    this.names = new UniqueName((name) => repository.findByName(name), () => conflict('connector_name_taken', 'A connector with this name already exists', 'body.name'));
  }

  /**
   * With `readerGroups` (a caller's), only the connectors allowed to one of these groups, and document_count counts
   * only the documents such a reader may read. Without them (the service's own callers), every connector and document.
   */
  async list(readerGroups?: string[]): Promise<ConnectorViewRow[]> {
    const connectors = (await this.repository.list()).filter((connector) => readableRow(connector, readerGroups));
    return this.withDocumentCounts(connectors, readerGroups);
  }

  /** A connector outside the reader's groups is not found, as if it did not exist. */
  async get(id: string, readerGroups?: string[]): Promise<ConnectorViewRow> {
    const connector = await this.repository.findById(id);
    if (!connector || !readableRow(connector, readerGroups)) throw notFound('Connector');
    return (await this.withDocumentCounts([connector], readerGroups))[0];
  }

  private async withDocumentCounts(connectors: ConnectorRow[], readerGroups?: string[]): Promise<ConnectorViewRow[]> {
    const counts = await this.documents.countsBySource('connector', connectors.map((connector) => connector.id), readerGroups);
    return connectors.map((connector) => ({ ...connector, document_count: counts.get(connector.id) ?? 0 }));
  }

  async create(input: CreateConnectorBody): Promise<ConnectorViewRow> {
    const name = input.name.trim();
    await this.names.assertFree(name);
    const realPath = await this.allowed.resolveDirectory(input.path);
    const id = randomUUID();
    const now = clock.now();
    await this.names.write(this.repository.insert({
      id,
      name,
      path: realPath,
      recursive: input.recursive === false ? 0 : 1,
      include: JSON.stringify(normaliseInclude(input.include ?? [])),
      enabled: input.enabled === false ? 0 : 1,
      last_scan_at: null,
      scan_requested_at: null,
      last_scan: null,
      created_at: now,
      updated_at: now,
    }));
    return this.get(id);
  }

  /** Any subset of the fields; a new path, include or recursive takes effect at the next scan. */
  async update(id: string, input: UpdateConnectorBody, readerGroups?: string[]): Promise<ConnectorViewRow> {
    await this.get(id, readerGroups);
    const change: Updateable<ConnectorsTable> = { updated_at: clock.now() };
    if (input.name !== undefined) {
      await this.names.assertFree(input.name.trim(), id);
      change.name = input.name.trim();
    }
    if (input.path !== undefined) change.path = await this.allowed.resolveDirectory(input.path);
    if (input.recursive !== undefined) change.recursive = input.recursive ? 1 : 0;
    if (input.include !== undefined) change.include = JSON.stringify(normaliseInclude(input.include));
    if (input.enabled !== undefined) change.enabled = input.enabled ? 1 : 0;
    await this.names.write(this.repository.update(id, change));
    return this.get(id, readerGroups);
  }

  /** What another plugin keeps per connector goes when the connector is deleted. */
  onDelete(listener: (id: string) => Promise<void>): void {
    this.deleteListeners.push(listener);
  }

  /**
   * Removes the connector (its schedules go by foreign key), what other plugins keep for it (metadata rules, by
   * onDelete: before the documents, so that work of theirs on the source stops first), and its documents (chunks
   * and vectors); the files in its folder are not touched.
   */
  async delete(id: string, readerGroups?: string[]): Promise<{ documentsRemoved: number }> {
    await this.get(id, readerGroups);
    this.deleted.add(id);
    // Decided by the delete itself: of deletes sent together, one removes the connector and the others find none.
    if (!(await this.repository.delete(id))) throw notFound('Connector');
    for (const listener of this.deleteListeners) await listener(id);
    return { documentsRemoved: await this.removeDocumentsOf(id) };
  }

  async scan(id: string, readerGroups?: string[]): Promise<Job> {
    const connector = await this.get(id, readerGroups);
    if (connector.enabled !== 1) throw conflict('connector_disabled', 'This connector is disabled; enable it before scanning');
    return this.enqueueScan(connector);
  }

  /** One scan job per enabled connector the reader may see (all of them for the service itself); they run one after another. */
  async syncAll(readerGroups?: string[]): Promise<Job[]> {
    const jobs: Job[] = [];
    for (const connector of await this.repository.listEnabled()) if (readableRow(connector, readerGroups)) jobs.push(await this.enqueueScan(connector));
    return jobs;
  }

  /** At start: scans asked for that never ended (the service stopped or crashed meanwhile) are queued again. */
  async resumeInterrupted(): Promise<void> {
    const interrupted = await this.repository.listScanRequested();
    if (interrupted.length === 0) return;
    this.log.warn({ connectors: interrupted.map((connector) => connector.id) }, 'resuming connector scans interrupted by a restart');
    for (const connector of interrupted) {
      if (connector.enabled === 1) await this.enqueueScan(connector);
      else await this.repository.endScanRequest(connector.id, connector.scan_requested_at!);
    }
  }

  /** The request is kept in the database until the scan ends, so that a stop or a crash does not forget it. */
  private async enqueueScan(connector: ConnectorRow): Promise<Job> {
    const requestedAt = clock.now();
    await this.repository.update(connector.id, { scan_requested_at: requestedAt });
    return this.jobs.enqueue(SCAN_JOB_TYPE, (context) => this.runScan(connector.id, requestedAt, context), { connector_id: connector.id }, () =>
      this.repository.endScanRequest(connector.id, requestedAt));
  }

  private async runScan(id: string, requestedAt: number, context: JobContext): Promise<void> {
    const checkpoint = () => {
      context.checkpoint();
      if (this.deleted.has(id)) throw new JobCancelled();
    };
    try {
      checkpoint();
      const connector = await this.repository.findById(id);
      if (!connector) throw new JobCancelled();
      await this.scanner.scan(connector, requestedAt, { ...context, checkpoint });
    } finally {
      // A scan racing a delete may have registered a file after the delete removed the rest.
      if (this.deleted.has(id)) await this.removeDocumentsOf(id);
    }
  }

  private async removeDocumentsOf(id: string): Promise<number> {
    const documents = await this.documents.ofSource('connector', id);
    const deleted = await this.documents.remove(documents.map((document) => document.id));
    return deleted.length;
  }
}
