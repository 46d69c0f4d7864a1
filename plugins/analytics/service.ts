import type { MetadataRulesService } from '../metadata-rules/index.js';
import type { AnalyticsRepository, AnalyticsSource, RankBucket, Summary } from './repository.js';

/** Histogram buckets of the distributions. */
const BUCKETS = 20;
/** Document ids empty-metadata lists at most. */
const EMPTY_SAMPLE = 10;

export interface Bucket {
  from: number;
  to: number;
  count: number;
}

const ratio = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0);
const round = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100);
/** Nearest-rank: the smallest value with at least p of the values at or below it. */
const rankOf = (p: number, count: number) => Math.max(0, Math.ceil(p * count) - 1);

/**
 * The seven analytics of a source's metadata and chunking, each a few SQL aggregates (repository), over
 * the documents the caller may read (issue 18): counts, totals and sample ids never include the others.
 */
export class AnalyticsService {
  constructor(
    private readonly repository: AnalyticsRepository,
    private readonly rules: MetadataRulesService,
  ) {}

  async chunkSizeDistribution(sourceId: string, readerGroups: string[]) {
    const source = await this.source(sourceId, readerGroups);
    const summary = await this.repository.chunkSizeSummary(source);
    return {
      ...header(source),
      unit: 'characters' as const,
      ...(await this.distribution(summary, (rank, bucket) => this.repository.chunkSizeValueAt(source, rank, bucket), (min, width) => this.repository.chunkSizeHistogram(source, min, width, BUCKETS))),
    };
  }

  async chunksPerDocument(sourceId: string, readerGroups: string[]) {
    const source = await this.source(sourceId, readerGroups);
    const summary = await this.repository.documentChunkSummary(source);
    return {
      ...header(source),
      ...(await this.distribution(summary, (rank, bucket) => this.repository.documentChunksValueAt(source, rank, bucket), (min, width) => this.repository.documentChunksHistogram(source, min, width, BUCKETS))),
    };
  }

  async metadataHitRate(sourceId: string, readerGroups: string[]) {
    const source = await this.source(sourceId, readerGroups);
    const [rules, totals, hits] = await Promise.all([this.rules.list(sourceId), this.repository.totals(source), this.repository.hitsPerRule(source)]);
    const byRule = new Map(hits.map((hit) => [hit.rule_id, hit]));
    return {
      ...header(source),
      documents_total: totals.documents,
      chunks_total: totals.chunks,
      rules: rules.map((rule) => {
        const hit = byRule.get(rule.id) ?? { documents: 0, chunks: 0 };
        return {
          rule_id: rule.id,
          field_name: rule.field_name,
          level: rule.level,
          documents_matched: hit.documents,
          chunks_matched: hit.chunks,
          document_rate: ratio(hit.documents, totals.documents),
          chunk_rate: ratio(hit.chunks, totals.chunks),
        };
      }),
    };
  }

  async metadataCoverage(sourceId: string, readerGroups: string[]) {
    const source = await this.source(sourceId, readerGroups);
    const rules = await this.rules.list(sourceId);
    const [totals, fields] = await Promise.all([this.repository.totals(source), this.repository.fieldTotals(source, fieldNames(rules))]);
    const byField = new Map(fields.map((field) => [field.field_name, field]));
    return {
      ...header(source),
      documents_total: totals.documents,
      chunks_total: totals.chunks,
      fields: fieldNames(rules).map((name) => {
        const field = byField.get(name) ?? { chunks: 0, documents: 0, distinct_values: 0 };
        return {
          field_name: name,
          chunks_with_value: field.chunks,
          coverage: ratio(field.chunks, totals.chunks),
          documents_with_value: field.documents,
          document_coverage: ratio(field.documents, totals.documents),
          distinct_values: field.distinct_values,
        };
      }),
    };
  }

  async inheritanceRatio(sourceId: string, readerGroups: string[]) {
    const source = await this.source(sourceId, readerGroups);
    const [rules, totals, values] = await Promise.all([this.rules.list(sourceId), this.repository.totals(source), this.repository.valuesPerRule(source)]);
    const fieldOf = new Map(rules.map((rule) => [rule.id, rule.field_name]));
    const chunkFields = fieldNames(rules.filter((rule) => rule.level === 'chunk'));
    return {
      ...header(source),
      chunks_total: totals.chunks,
      fields: chunkFields.map((name) => {
        const count = (origin: string) => values.filter((row) => fieldOf.get(row.rule_id) === name && row.origin === origin).reduce((sum, row) => sum + row.chunks, 0);
        const [self, inherited, document] = [count('self'), count('inherited'), count('document')];
        const empty = Math.max(0, totals.chunks - self - inherited - document);
        return {
          field_name: name,
          self_matched: self,
          inherited,
          document_level: document,
          empty,
          self_ratio: ratio(self, totals.chunks),
          inherited_ratio: ratio(inherited, totals.chunks),
          document_level_ratio: ratio(document, totals.chunks),
          empty_ratio: ratio(empty, totals.chunks),
        };
      }),
    };
  }

  async emptyMetadata(sourceId: string, readerGroups: string[]) {
    const source = await this.source(sourceId, readerGroups);
    const [totals, empty] = await Promise.all([this.repository.totals(source), this.repository.emptyChunks(source, EMPTY_SAMPLE)]);
    return {
      ...header(source),
      chunks_total: totals.chunks,
      empty_chunks: empty.chunks,
      empty_ratio: ratio(empty.chunks, totals.chunks),
      documents_with_empty_chunks: empty.documents,
      sample_document_ids: empty.sample,
    };
  }

  async rulePriorityAudit(sourceId: string, readerGroups: string[]) {
    const source = await this.source(sourceId, readerGroups);
    const [rules, wins] = await Promise.all([this.rules.list(sourceId), this.repository.contestedWins(source)]);
    const winsOf = new Map(wins.map((row) => [row.rule_id, row.wins]));
    return {
      ...header(source),
      fields: fieldNames(rules).map((name) => {
        const ofField = rules.filter((rule) => rule.field_name === name);
        const contested = ofField.reduce((sum, rule) => sum + (winsOf.get(rule.id) ?? 0), 0);
        return {
          field_name: name,
          contested,
          rules: ofField.map((rule) => {
            const won = winsOf.get(rule.id) ?? 0;
            return { rule_id: rule.id, level: rule.level, priority: rule.priority, wins: won, win_rate: ratio(won, contested) };
          }),
        };
      }),
    };
  }

  /** The source (404 when there is none) as this reader sees it: only documents their groups may read count. */
  private async source(sourceId: string, readerGroups: string[]): Promise<AnalyticsSource> {
    return { ...(await this.rules.source(sourceId, readerGroups)), readerGroups };
  }

  private async distribution(summary: Summary, valueAt: (rank: number, bucket: RankBucket) => Promise<number | null>, histogram: (min: number, width: number) => Promise<Map<number, number>>) {
    const { count, min, max } = summary;
    if (!count || min === null || max === null) return { count: 0, min: null, max: null, mean: null, median: null, p90: null, buckets: [] as Bucket[] };
    const width = Math.max(1, Math.ceil((max - min + 1) / BUCKETS));
    const buckets = Math.min(BUCKETS, Math.ceil((max - min + 1) / width));
    const counts = await histogram(min, width);
    const edges = Array.from({ length: buckets }, (_, i) => ({ from: min + i * width, to: i === buckets - 1 ? max + 1 : min + (i + 1) * width, count: counts.get(i) ?? 0 }));
    // Each percentile sorts only the values of the bucket its rank falls in.
    const at = (rank: number) => {
      let before = 0;
      const bucket = edges.find((edge) => (before += edge.count) > rank)!;
      return valueAt(rank, { from: bucket.from, to: bucket.to, before: before - bucket.count });
    };
    const [median, p90] = await Promise.all([at(rankOf(0.5, count)), at(rankOf(0.9, count))]);
    return {
      count,
      min,
      max,
      mean: round(summary.mean),
      median,
      p90,
      buckets: edges as Bucket[],
    };
  }
}

const header = (source: AnalyticsSource) => ({ source_id: source.id, source_type: source.type });

/** The fields of the rules, in the order of their first rule (rules come highest priority first). */
function fieldNames(rules: Array<{ field_name: string }>): string[] {
  return [...new Set(rules.map((rule) => rule.field_name))];
}
