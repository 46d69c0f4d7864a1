import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

export const RULE_SCOPES = ['full', 'header', 'filename'] as const;
export const RULE_LEVELS = ['document', 'chunk'] as const;
export const SOURCE_TYPES = ['upload', 'connector', 'integration'] as const;
/** The built-in source of uploaded documents: its rules live at /api/metadata/uploads/rules. */
export const UPLOADS_SOURCE_ID = 'uploads';
/** Sample text POST …/test-rule reads at most. */
export const SAMPLE_TEXT_MAX = 100_000;
/** Matches test-rule lists at most. */
export const TEST_MATCH_LIMIT = 100;

const PatternSchema = Type.String({ minLength: 1, maxLength: 1000, description: 'Python-style regular expression with exactly one capture group (the value)' });

const fields = {
  field_name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$', description: 'Metadata key: a letter or _ then letters, digits, _, . or - (64 at most)' }),
  pattern: PatternSchema,
  query_pattern: Type.Union([PatternSchema, Type.Null()], { description: 'Pattern matched against chat questions; null: pattern serves both' }),
  scope: StringEnum(RULE_SCOPES, { description: 'full (the text), header (the first 1,000 characters of a document; a chunk’s heading), filename' }),
  level: StringEnum(RULE_LEVELS, { description: 'document (one value per document) or chunk (per chunk, with inheritance)' }),
  chunk_boundary: Type.Boolean({ description: 'Matches start a new chunk (a pre-split before chunking); default false' }),
  priority: Type.Integer({ minimum: -1000, maximum: 1000, description: 'Higher first; for one field the highest-priority matching rule wins, ties to the oldest rule; default 0' }),
};

export const CreateRuleBody = Type.Object(
  {
    field_name: fields.field_name,
    pattern: fields.pattern,
    query_pattern: Type.Optional(fields.query_pattern),
    scope: fields.scope,
    level: fields.level,
    chunk_boundary: Type.Optional(fields.chunk_boundary),
    priority: Type.Optional(fields.priority),
  },
  { additionalProperties: false },
);
export type CreateRuleBody = Static<typeof CreateRuleBody>;

export const UpdateRuleBody = Type.Object(
  {
    field_name: Type.Optional(fields.field_name),
    pattern: Type.Optional(fields.pattern),
    query_pattern: Type.Optional(fields.query_pattern),
    scope: Type.Optional(fields.scope),
    level: Type.Optional(fields.level),
    chunk_boundary: Type.Optional(fields.chunk_boundary),
    priority: Type.Optional(fields.priority),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateRuleBody = Static<typeof UpdateRuleBody>;

export const RuleView = Type.Object(
  {
    id: Type.String(),
    source_id: Type.String(),
    source_type: StringEnum(SOURCE_TYPES),
    field_name: Type.String(),
    pattern: Type.String(),
    query_pattern: Type.Union([Type.String(), Type.Null()]),
    scope: StringEnum(RULE_SCOPES),
    level: StringEnum(RULE_LEVELS),
    chunk_boundary: Type.Boolean(),
    priority: Type.Integer(),
    active: Type.Boolean({ description: 'false below PRO (after a downgrade): the rule is kept but not applied' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'MetadataRule' },
);
export type RuleView = Static<typeof RuleView>;

export const RuleList = Type.Object({
  rules: Type.Array(RuleView, { description: 'Highest priority first, then oldest first: the order they are applied in' }),
  total: Type.Integer(),
  active: Type.Boolean({ description: 'Whether the plan applies the rules (PRO or higher)' }),
  inactive_reason: Type.Optional(Type.String({ description: 'Why the rules are not applied, when they are not' })),
});

export const SourceParams = Type.Object({ source_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const RuleParams = Type.Object({ source_id: Type.String({ minLength: 1, maxLength: 64 }), rule_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const TestRuleBody = Type.Object(
  {
    pattern: PatternSchema,
    text: Type.String({ maxLength: SAMPLE_TEXT_MAX, description: `Sample text (${SAMPLE_TEXT_MAX} characters at most)` }),
  },
  { additionalProperties: false },
);

const Span = Type.Object({ start: Type.Integer(), end: Type.Integer() }, { description: 'Offsets in the sample text (UTF-16 code units, as JavaScript counts), end exclusive' });
export const TestRuleResult = Type.Object({
  matched: Type.Boolean(),
  /** What ingestion would store: the first match's value. */
  value: Type.Union([Type.String(), Type.Null()], { description: 'The value ingestion would store (the first match’s capture), null when nothing matched' }),
  matches: Type.Array(
    Type.Object({ text: Type.String(), value: Type.String(), span: Span, value_span: Type.Union([Span, Type.Null()]) }),
    { description: `Every match, left to right (${TEST_MATCH_LIMIT} at most)` },
  ),
  truncated: Type.Boolean({ description: `true when there were more than ${TEST_MATCH_LIMIT} matches` }),
  translated_pattern: Type.String({ description: 'The pattern as the RE2 engine runs it' }),
});

export const RefreshResult = Type.Object(
  {
    documents: Type.Integer({ description: 'Documents of the source' }),
    relabelled: Type.Integer({ description: 'Documents whose chunks got their values again, without re-embedding' }),
    rechunked: Type.Integer({ description: 'Documents chunked again because their chunk boundaries changed (only their changed chunks were embedded again)' }),
    chunks: Type.Integer({ description: 'Chunks labelled' }),
    active: Type.Boolean({ description: 'false when the plan no longer applies rules: the documents were cleared of rule values' }),
  },
  { $id: 'MetadataRefreshResult' },
);
export type RefreshResult = Static<typeof RefreshResult>;
