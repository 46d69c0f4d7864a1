import { randomUUID } from 'node:crypto';
import { clock } from '../../core/clock.js';
import { badRequest, notFound } from '../../core/errors.js';
import type { Job } from '../../core/jobs/job.js';
import { JobCancelled, type JobRunner } from '../../core/jobs/runner.js';
import { type Entitlement, tierAtLeast } from '../../core/tiers.js';
import type { DocumentRow } from '../documents/index.js';
import type { DocumentRules } from '../ingestion/index.js';
import { PatternError, RulePattern } from './python-regex.js';
import type { RefreshJob } from './refresh.js';
import type { MetadataRulesRepository, RuleRow } from './repository.js';
import { RuleSet } from './rule-engine.js';
import { type CreateRuleBody, type RuleView, TEST_MATCH_LIMIT, type UpdateRuleBody, UPLOADS_SOURCE_ID } from './schemas.js';

/** A source rules belong to: a connector, an integration, or the built-in `uploads`. */
export interface RuleSource {
  type: RuleRow['source_type'];
  id: string;
  /** documents.source_id of its documents (null for uploads). */
  documentSourceId: string | null;
}

/** Whether a connector or an integration of this id exists. */
export interface SourceLookup {
  /** With reader groups: whether the source exists and is allowed to one of them (else as if it did not exist). */
  connectorExists(id: string, readerGroups?: string[]): Promise<boolean>;
  integrationExists(id: string, readerGroups?: string[]): Promise<boolean>;
}

/** A metadata filter a chat question asks for: chunks whose field has this value. */
export interface MetadataCondition {
  field: string;
  value: string;
}

export const REFRESH_JOB_TYPE = 'metadata.refresh';
const INACTIVE_REASON = 'Metadata rules need the PRO plan or higher: these rules are kept but not applied at ingestion or to questions until a PRO or ENTERPRISE licence is applied';

/** The rules of metadata rules: CRUD, checking patterns, the rules in force for ingestion and for questions. No HTTP here. */
export class MetadataRulesService {
  /** Compiled rules per source, and for questions; dropped on every change. */
  private readonly ruleSets = new Map<string, Promise<RuleSet | null>>();
  private queryRules: Promise<Array<{ field: string; pattern: RulePattern }>> | null = null;
  /** Sources deleted while a refresh of theirs may still be queued or running: it stops at its next checkpoint. */
  private readonly deletedSources = new Set<string>();

  constructor(
    private readonly repository: MetadataRulesRepository,
    private readonly sources: SourceLookup,
    private readonly entitlement: Entitlement,
    private readonly jobs: JobRunner,
    private readonly refreshJob: RefreshJob,
  ) {}

  /** The plan applies rules (PRO or higher). */
  active(): boolean {
    return tierAtLeast(this.entitlement.tier(), 'PRO');
  }

  inactiveReason(): string | undefined {
    return this.active() ? undefined : INACTIVE_REASON;
  }

  /** The source named; with a caller's groups, a source outside them is not found (uploads are everyone's). */
  async source(sourceId: string, readerGroups?: string[]): Promise<RuleSource> {
    if (sourceId === UPLOADS_SOURCE_ID) return { type: 'upload', id: UPLOADS_SOURCE_ID, documentSourceId: null };
    if (await this.sources.connectorExists(sourceId, readerGroups)) return { type: 'connector', id: sourceId, documentSourceId: sourceId };
    if (await this.sources.integrationExists(sourceId, readerGroups)) return { type: 'integration', id: sourceId, documentSourceId: sourceId };
    throw notFound('Source');
  }

  async list(sourceId: string): Promise<RuleView[]> {
    const source = await this.source(sourceId);
    return sortForApplying(await this.repository.ofSource(source.type, source.id)).map((row) => this.view(row));
  }

  async create(sourceId: string, input: CreateRuleBody): Promise<RuleView> {
    const source = await this.source(sourceId);
    checkPatterns(input);
    const now = clock.now();
    const id = randomUUID();
    await this.repository.insert({
      id,
      source_type: source.type,
      source_id: source.id,
      field_name: input.field_name,
      pattern: input.pattern,
      query_pattern: input.query_pattern ?? null,
      scope: input.scope,
      level: input.level,
      chunk_boundary: input.chunk_boundary ? 1 : 0,
      priority: input.priority ?? 0,
      created_at: now,
      updated_at: now,
    });
    this.changed();
    return this.view((await this.repository.find(source.type, source.id, id))!);
  }

  async update(sourceId: string, ruleId: string, input: UpdateRuleBody): Promise<RuleView> {
    const source = await this.source(sourceId);
    const rule = await this.find(source, ruleId);
    checkPatterns(input);
    const { chunk_boundary: chunkBoundary, ...rest } = input;
    await this.repository.update(rule.id, { ...rest, ...(chunkBoundary === undefined ? {} : { chunk_boundary: chunkBoundary ? 1 : 0 }), updated_at: clock.now() });
    this.changed();
    return this.view((await this.repository.find(source.type, source.id, rule.id))!);
  }

  async delete(sourceId: string, ruleId: string): Promise<void> {
    const source = await this.source(sourceId);
    // Decided by the delete itself: of deletes sent together, one removes the rule and the others find none.
    if (!(await this.repository.delete(source.type, source.id, ruleId))) throw notFound('Rule');
    this.changed();
  }

  /** Runs a pattern over sample text, saving nothing. */
  async test(sourceId: string, pattern: string, text: string) {
    await this.source(sourceId);
    const compiled = compileOrRefuse(pattern, 'body.pattern');
    const matches = compiled.all(text, TEST_MATCH_LIMIT + 1);
    const shown = matches.slice(0, TEST_MATCH_LIMIT);
    return {
      matched: shown.length > 0,
      value: shown[0]?.value ?? null,
      matches: shown.map((match) => ({
        text: text.slice(match.start, match.end),
        value: match.value,
        span: { start: match.start, end: match.end },
        value_span: match.valueStart < 0 ? null : { start: match.valueStart, end: match.valueEnd },
      })),
      truncated: matches.length > TEST_MATCH_LIMIT,
      translated_pattern: compiled.translated,
    };
  }

  /** Re-applies the source's rules to its documents as a job. */
  async refresh(sourceId: string): Promise<Job> {
    const source = await this.source(sourceId);
    const key = sourceKey(source);
    return this.jobs.enqueue(REFRESH_JOB_TYPE, async (context) => {
      const checkpoint = () => {
        context.checkpoint();
        if (this.deletedSources.has(key)) throw new JobCancelled();
      };
      checkpoint();
      await this.refreshJob.run(source, await this.ruleSetOf(source), this.active(), { ...context, checkpoint });
    }, { source_id: source.id });
  }

  /**
   * A connector or integration is being deleted: its rules go, questions stop being matched against them, and a
   * refresh of it stops at its next checkpoint. The values and hits they gave go with the source's documents' chunks.
   */
  async sourceDeleted(type: Exclude<RuleRow['source_type'], 'upload'>, id: string): Promise<void> {
    this.deletedSources.add(sourceKey({ type, id }));
    await this.repository.deleteOfSource(type, id);
    this.changed();
  }

  /** Ingestion's lookup: the rules in force for a document's source (null: none, or the plan lapsed). */
  async rulesFor(document: DocumentRow): Promise<DocumentRules | null> {
    const source: RuleSource = document.source_type === 'upload'
      ? { type: 'upload', id: UPLOADS_SOURCE_ID, documentSourceId: null }
      : { type: document.source_type, id: document.source_id ?? '', documentSourceId: document.source_id };
    const rules = await this.ruleSetOf(source);
    return rules && { boundaryKey: rules.boundaryKey(), split: (sections) => rules.split(sections), label: (filename, chunks) => rules.label(filename, chunks) };
  }

  /** What a question asks to filter on: per field, the value of the highest-priority rule whose query pattern matches it. */
  async classify(question: string): Promise<MetadataCondition[]> {
    if (!this.active()) return [];
    this.queryRules ??= this.repository.all().then((rows) =>
      sortForApplying(rows).map((row) => ({ field: row.field_name, pattern: new RulePattern(row.query_pattern ?? row.pattern) })),
    );
    const conditions = new Map<string, string>();
    for (const { field, pattern } of await this.queryRules) {
      if (conditions.has(field)) continue;
      const match = pattern.first(question);
      if (match?.value) conditions.set(field, match.value);
    }
    return [...conditions].map(([field, value]) => ({ field, value }));
  }

  private ruleSetOf(source: RuleSource): Promise<RuleSet | null> {
    if (!this.active()) return Promise.resolve(null);
    const key = sourceKey(source);
    let rules = this.ruleSets.get(key);
    if (!rules) {
      rules = this.repository.ofSource(source.type, source.id).then((rows) => (rows.length ? new RuleSet(rows.map(toDefinition)) : null));
      rules.catch(() => this.ruleSets.delete(key));
      this.ruleSets.set(key, rules);
    }
    return rules;
  }

  private changed(): void {
    this.ruleSets.clear();
    this.queryRules = null;
  }

  private async find(source: RuleSource, ruleId: string): Promise<RuleRow> {
    const rule = await this.repository.find(source.type, source.id, ruleId);
    if (!rule) throw notFound('Rule');
    return rule;
  }

  private view(row: RuleRow): RuleView {
    return {
      id: row.id,
      source_id: row.source_id,
      source_type: row.source_type,
      field_name: row.field_name,
      pattern: row.pattern,
      query_pattern: row.query_pattern,
      scope: row.scope,
      level: row.level,
      chunk_boundary: row.chunk_boundary === 1,
      priority: row.priority,
      active: this.active(),
      created_at: clock.iso(row.created_at),
      updated_at: clock.iso(row.updated_at),
    };
  }
}

const sourceKey = (source: { type: RuleRow['source_type']; id: string }) => `${source.type}:${source.id}`;

/** Highest priority first, then oldest (creation order): the order rules are applied in. */
function sortForApplying(rows: RuleRow[]): RuleRow[] {
  return [...rows].sort((a, b) => b.priority - a.priority || a.seq - b.seq);
}

function toDefinition(row: RuleRow) {
  return { id: row.id, field_name: row.field_name, pattern: row.pattern, scope: row.scope, level: row.level, chunk_boundary: row.chunk_boundary === 1, priority: row.priority };
}

function compileOrRefuse(pattern: string, field: string): RulePattern {
  try {
    return new RulePattern(pattern);
  } catch (error) {
    if (error instanceof PatternError) throw badRequest('invalid_pattern', `${field.replace('body.', '')}: ${error.message}`, field);
    throw error;
  }
}

function checkPatterns(input: { pattern?: string; query_pattern?: string | null }): void {
  if (input.pattern !== undefined) compileOrRefuse(input.pattern, 'body.pattern');
  if (input.query_pattern) compileOrRefuse(input.query_pattern, 'body.query_pattern');
}
