import { Type } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

const Int = (description: string) => Type.Integer({ minimum: 0, description });
const Ratio = (description: string) => Type.Number({ minimum: 0, maximum: 1, description: `${description} (0 to 1, 4 decimals)` });
const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const AnalyticsParams = Type.Object({ source_id: Type.String({ minLength: 1, maxLength: 64 }) });

const Header = {
  source_id: Type.String(),
  source_type: StringEnum(['upload', 'connector', 'integration'] as const),
};

const Distribution = {
  count: Int('Values counted'),
  min: NullableNumber('Smallest value (null when there is none)'),
  max: NullableNumber('Largest value'),
  mean: NullableNumber('Mean, 2 decimals'),
  median: NullableNumber('Median, nearest rank (the lower middle value of an even count)'),
  p90: NullableNumber('90th percentile, nearest rank'),
  buckets: Type.Array(
    Type.Object({ from: Type.Number({ description: 'Inclusive' }), to: Type.Number({ description: 'Exclusive' }), count: Int('Values in [from, to)') }),
    { description: 'Histogram: up to 20 equal-width buckets from min to max' },
  ),
};

export const ChunkSizeDistribution = Type.Object({ ...Header, unit: Type.Literal('characters'), ...Distribution }, { description: 'Chunk lengths in characters over the source’s indexed documents' });
export const ChunksPerDocument = Type.Object({ ...Header, ...Distribution }, { description: 'Chunks per indexed document of the source' });

export const MetadataHitRate = Type.Object({
  ...Header,
  documents_total: Int('Indexed documents of the source'),
  chunks_total: Int('Their chunks'),
  rules: Type.Array(Type.Object({
    rule_id: Type.String(),
    field_name: Type.String(),
    level: StringEnum(['document', 'chunk'] as const),
    documents_matched: Int('Documents with at least one chunk the pattern matched (document level: documents it matched)'),
    chunks_matched: Int('Chunks the pattern matched itself (document level: every chunk of a matched document), whether or not the rule won'),
    document_rate: Ratio('documents_matched / documents_total'),
    chunk_rate: Ratio('chunks_matched / chunks_total'),
  }), { description: 'Every rule of the source, in the order they apply' }),
});

export const MetadataCoverage = Type.Object({
  ...Header,
  documents_total: Int('Indexed documents of the source'),
  chunks_total: Int('Their chunks'),
  fields: Type.Array(Type.Object({
    field_name: Type.String(),
    chunks_with_value: Int('Chunks with a value of the field (matched, inherited or document level)'),
    coverage: Ratio('chunks_with_value / chunks_total'),
    documents_with_value: Int('Documents with a value on at least one chunk'),
    document_coverage: Ratio('documents_with_value / documents_total'),
    distinct_values: Int('Different values'),
  })),
});

export const InheritanceRatio = Type.Object({
  ...Header,
  chunks_total: Int('Chunks of the source’s indexed documents'),
  fields: Type.Array(Type.Object({
    field_name: Type.String(),
    self_matched: Int('Chunks a chunk-level rule of the field matched'),
    inherited: Int('Chunks that took the value of an earlier chunk of their document'),
    document_level: Int('Chunks with no earlier match that took the document-level value'),
    empty: Int('Chunks without a value of the field'),
    self_ratio: Ratio('self_matched / chunks_total'),
    inherited_ratio: Ratio('inherited / chunks_total'),
    document_level_ratio: Ratio('document_level / chunks_total'),
    empty_ratio: Ratio('empty / chunks_total'),
  }), { description: 'The fields with at least one chunk-level rule' }),
});

export const EmptyMetadata = Type.Object({
  ...Header,
  chunks_total: Int('Chunks of the source’s indexed documents'),
  empty_chunks: Int('Chunks without any metadata value'),
  empty_ratio: Ratio('empty_chunks / chunks_total'),
  documents_with_empty_chunks: Int('Documents with at least one such chunk'),
  sample_document_ids: Type.Array(Type.String(), { description: 'Up to 10 of those documents (by id order)' }),
});

export const RulePriorityAudit = Type.Object({
  ...Header,
  fields: Type.Array(Type.Object({
    field_name: Type.String(),
    contested: Int('Chunks where two or more rules of the field matched (so the priority decided)'),
    rules: Type.Array(Type.Object({
      rule_id: Type.String(),
      level: StringEnum(['document', 'chunk'] as const),
      priority: Type.Integer(),
      wins: Int('Contested chunks this rule won'),
      win_rate: Ratio('wins / contested'),
    }), { description: 'The field’s rules, highest priority first (ties: oldest first)' }),
  })),
});
