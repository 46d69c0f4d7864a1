import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { clock } from '../../core/clock.js';
import type { SecretBox } from '../../core/crypto/secret-box.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import type { Job } from '../../core/jobs/job.js';
import { JobFailure, type JobRunner } from '../../core/jobs/runner.js';
import type { DocumentsService, RunIndexer } from '../documents/index.js';
import { readableRow } from '../groups/index.js';
import type { RunSummary } from '../jobs/index.js';
import type { Credentials, WebConfig } from './crawler.js';
import type { IntegrationRow, IntegrationsRepository } from './repository.js';
import type { CreateIntegrationBody, IntegrationView, UpdateIntegrationBody } from './schemas.js';
import { assertUrlAllowed, type Network } from '../../core/net/ssrf-guard.js';
import { UniqueName } from '../../core/unique-name.js';
import { IntegrationSync } from './sync.js';

export const SYNC_JOB_TYPE = 'integration.sync';
export const credentialsContext = (id: string) => `integration:${id}`;

interface IntegrationsServiceOptions {
  repository: IntegrationsRepository;
  documents: DocumentsService;
  ingestion: RunIndexer;
  jobs: JobRunner;
  secretBox: SecretBox;
  dataDir: string;
  log: FastifyBaseLogger;
  /** How hosts are resolved and reached (app.network). */
  network: Network;
}

function toIntegrationView(row: IntegrationRow, documentCount: number): IntegrationView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    config: JSON.parse(row.config) as WebConfig,
    credentials_set: row.credentials_sealed !== null,
    enabled: row.enabled === 1,
    document_count: documentCount,
    last_sync_at: row.last_sync_at === null ? null : clock.iso(row.last_sync_at),
    last_sync: row.last_sync === null ? null : (JSON.parse(row.last_sync) as RunSummary),
    created_at: clock.iso(row.created_at),
    updated_at: clock.iso(row.updated_at),
  };
}

/** Integrations (remote sources; a website crawler for now): CRUD with write-only credentials, and syncs as jobs. */
export class IntegrationsService {
  readonly repository: IntegrationsRepository;
  /** The sync job of each integration, so that a second request joins it instead of crawling twice. */
  private readonly syncJobs = new Map<string, string>();
  /** What other plugins keep per integration (its metadata rules), dropped after a delete. */
  private readonly deleteListeners: Array<(id: string) => Promise<void>> = [];
  private readonly names: UniqueName;

  constructor(private readonly options: IntegrationsServiceOptions) {
    this.repository = options.repository;
    this.names = new UniqueName((name) => this.repository.findByName(name), () => conflict('integration_name_taken', 'An integration with this name already exists', 'body.name'));
  }

  /**
   * With `readerGroups` (a caller's), only the integrations allowed to one of these groups, and document_count counts
   * only the documents such a reader may read. Without them (the service's own callers), everything.
   */
  async list(limit: number, offset: number, readerGroups?: string[]): Promise<{ integrations: IntegrationView[]; total: number }> {
    const { integrations, total } = await this.repository.list(limit, offset, readerGroups);
    const counts = await this.options.documents.countsBySource('integration', integrations.map((row) => row.id), readerGroups);
    return { integrations: integrations.map((row) => toIntegrationView(row, counts.get(row.id) ?? 0)), total };
  }

  async view(id: string, readerGroups?: string[]): Promise<IntegrationView> {
    const row = await this.get(id, readerGroups);
    return toIntegrationView(row, (await this.options.documents.countsBySource('integration', [id], readerGroups)).get(id) ?? 0);
  }

  /** An integration outside the reader's groups is not found, as if it did not exist. */
  async get(id: string, readerGroups?: string[]): Promise<IntegrationRow> {
    const row = await this.repository.find(id);
    if (!row || !readableRow(row, readerGroups)) throw notFound('Integration');
    return row;
  }

  async create(input: CreateIntegrationBody): Promise<IntegrationView> {
    const config = await this.acceptConfig(input.config);
    await this.names.assertFree(input.name);
    const id = randomUUID();
    const now = clock.now();
    await this.names.write(this.repository.insert({
      id,
      name: input.name,
      kind: input.kind,
      config: JSON.stringify(config),
      credentials_sealed: input.credentials ? this.seal(id, input.credentials) : null,
      enabled: input.enabled === false ? 0 : 1,
      last_sync_at: null,
      sync_requested_at: null,
      last_sync: null,
      created_at: now,
      updated_at: now,
    }));
    return this.view(id);
  }

  /** A new config replaces the old one whole; pages it no longer reaches are removed by the next sync. */
  async update(id: string, input: UpdateIntegrationBody, readerGroups?: string[]): Promise<IntegrationView> {
    await this.get(id, readerGroups);
    const config = input.config ? await this.acceptConfig(input.config) : undefined;
    if (input.name !== undefined) await this.names.assertFree(input.name, id);
    await this.names.write(this.repository.update(id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(config ? { config: JSON.stringify(config) } : {}),
      ...(input.credentials !== undefined ? { credentials_sealed: input.credentials === null ? null : this.seal(id, input.credentials) } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
      updated_at: clock.now(),
    }));
    return this.view(id, readerGroups);
  }

  /** What another plugin keeps per integration goes when the integration is deleted. */
  onDelete(listener: (id: string) => Promise<void>): void {
    this.deleteListeners.push(listener);
  }

  /**
   * Removes the integration and its page records (and schedules, by foreign key), then stops its sync and what other
   * plugins keep for it (metadata rules, by onDelete) and removes its documents from the index. A sync still running
   * finds the integration gone and discards what it registered.
   */
  async delete(id: string, readerGroups?: string[]): Promise<void> {
    await this.get(id, readerGroups);
    // Decided by the delete itself: of deletes sent together, one removes the integration and the others find none.
    if (!(await this.repository.delete(id))) throw notFound('Integration');
    const jobId = this.syncJobs.get(id);
    if (jobId) await this.options.jobs.cancel(jobId);
    for (const listener of this.deleteListeners) await listener(id);
    const documents = await this.options.documents.ofSource('integration', id);
    if (documents.length) await this.options.documents.remove(documents.map((doc) => doc.id));
  }

  /** Starts a sync job, or returns the one already queued or running for this integration. */
  async sync(id: string, readerGroups?: string[]): Promise<Job> {
    const row = await this.get(id, readerGroups);
    if (row.enabled !== 1) throw conflict('integration_disabled', 'This integration is disabled; enable it to sync');
    const running = this.syncJobs.get(id);
    const current = running ? await this.options.jobs.store.get(running) : undefined;
    if (current && (current.state === 'queued' || current.state === 'running')) return current;
    // The request is kept in the database until the sync ends, so that a stop or a crash does not forget it.
    const requestedAt = clock.now();
    await this.repository.update(id, { sync_requested_at: requestedAt });
    const job = await this.options.jobs.enqueue(SYNC_JOB_TYPE, async (context) => {
      const integration = await this.repository.find(id);
      if (!integration) return;
      const sync = new IntegrationSync(this.options, integration, () => this.openCredentials(integration), requestedAt);
      await sync.sync(context);
    }, { integration_id: id }, () => this.repository.endSyncRequest(id, requestedAt));
    this.syncJobs.set(id, job.id);
    return job;
  }

  /** At start: syncs asked for that never ended (the service stopped or crashed meanwhile) are queued again. */
  async resumeInterrupted(): Promise<void> {
    const interrupted = await this.repository.listSyncRequested();
    if (interrupted.length === 0) return;
    this.options.log.warn({ integrations: interrupted.map((row) => row.id) }, 'resuming integration syncs interrupted by a restart');
    for (const row of interrupted) {
      if (row.enabled === 1) await this.sync(row.id);
      else await this.repository.endSyncRequest(row.id, row.sync_requested_at!);
    }
  }

  /** Defaults applied, URLs normalised, and every URL's host checked against the SSRF guard now, not only at sync. */
  private async acceptConfig(config: CreateIntegrationBody['config']): Promise<WebConfig> {
    if (!config.start_url && !config.sitemap_url) {
      throw badRequest('validation_failed', 'config needs start_url or sitemap_url', 'body.config.start_url');
    }
    const policy = { allowPrivateNetwork: config.allow_private_network };
    const urls: Partial<Record<'start_url' | 'sitemap_url', string>> = {};
    for (const key of ['start_url', 'sitemap_url'] as const) {
      const value = config[key];
      if (value === undefined) continue;
      const url = new URL(value);
      url.hash = '';
      await assertUrlAllowed(url, policy, this.options.network.resolve, `body.config.${key}`);
      urls[key] = url.href;
    }
    if (urls.start_url && urls.sitemap_url && new URL(urls.start_url).origin !== new URL(urls.sitemap_url).origin) {
      throw badRequest('validation_failed', 'config.sitemap_url must be on the same origin as config.start_url', 'body.config.sitemap_url');
    }
    return {
      ...urls,
      max_depth: config.max_depth,
      max_pages: config.max_pages,
      allow_private_network: config.allow_private_network,
      ...(config.user_agent ? { user_agent: config.user_agent } : {}),
    };
  }

  private seal(id: string, credentials: Credentials): string {
    return this.options.secretBox.seal(JSON.stringify(credentials), credentialsContext(id));
  }

  private openCredentials(row: IntegrationRow): Credentials | null {
    if (!row.credentials_sealed) return null;
    try {
      return JSON.parse(this.options.secretBox.open(row.credentials_sealed, credentialsContext(row.id))) as Credentials;
    } catch {
      throw new JobFailure('The stored credentials cannot be decrypted (was MFA_ENCRYPTION_KEY changed?); set them again');
    }
  }
}
