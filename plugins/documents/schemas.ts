import { type Static, Type } from 'typebox';
import { StringEnum } from '../../core/schemas.js';
import { JobView } from '../jobs/index.js';

const DOCUMENT_STATUSES = ['queued', 'indexing', 'indexed', 'failed'] as const;
const SOURCE_TYPES = ['upload', 'connector', 'integration'] as const;

export const PAGE_WARNING_REASONS = ['low_confidence', 'timeout', 'too_large', 'unreadable', 'no_text'] as const;

/** A page OCR read with low confidence (indexed, worth checking) or could not read (not indexed), and why. */
export const PageWarning = Type.Object({
  page: Type.Integer(),
  reason: StringEnum(PAGE_WARNING_REASONS),
  message: Type.String(),
  /** Tesseract's mean confidence (0-100), for a low_confidence page. */
  confidence: Type.Optional(Type.Number()),
});
export type PageWarning = Static<typeof PageWarning>;

export const DocumentView = Type.Object(
  {
    id: Type.String(),
    filename: Type.String(),
    file_type: Type.String(),
    mime_type: Type.String(),
    size_bytes: Type.Integer(),
    sha256: Type.String(),
    source_type: StringEnum(SOURCE_TYPES),
    source_id: Type.Union([Type.String(), Type.Null()]),
    source_path: Type.Union([Type.String(), Type.Null()]),
    status: StringEnum(DOCUMENT_STATUSES),
    error: Type.Union([Type.String(), Type.Null()]),
    page_count: Type.Union([Type.Integer(), Type.Null()]),
    chunk_count: Type.Integer(),
    page_warnings: Type.Array(PageWarning),
    groups: Type.Array(Type.String(), { description: 'Group names allowed to retrieve it (ENTERPRISE); only everyone is shown below ENTERPRISE' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    indexed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'Document' },
);

export const UploadResult = Type.Object({ document: DocumentView, job: JobView });

export const ListDocumentsQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(DOCUMENT_STATUSES)),
    file_type: Type.Optional(Type.String({ maxLength: 16 })),
    source_type: Type.Optional(StringEnum(SOURCE_TYPES)),
    source_id: Type.Optional(Type.String({ maxLength: 64 })),
    sort: StringEnum(['created_at', 'updated_at', 'filename', 'size_bytes'] as const, { default: 'created_at' }),
    order: StringEnum(['asc', 'desc'] as const, { default: 'desc' }),
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const DocumentList = Type.Object({ documents: Type.Array(DocumentView), total: Type.Integer() });

export const DocumentIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const BulkDeleteBody = Type.Object(
  { ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 500, uniqueItems: true }) },
  { additionalProperties: false },
);

export const BulkDeleteResult = Type.Object({ deleted: Type.Array(Type.String()), not_found: Type.Array(Type.String()) });
