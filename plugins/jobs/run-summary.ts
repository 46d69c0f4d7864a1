import { type Static, Type } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

// The result of the jobs that run a connector scan or integration sync (documents/source-run.ts): the job schema shows it.

/** Why a file or page of a connector or integration was not made a document. */
export const SKIP_REASONS = ['plan_document_limit', 'plan_storage_limit', 'tier_required', 'unsupported_type', 'too_large'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

const count = (description: string) => Type.Integer({ minimum: 0, description });

/** What one connector scan or integration sync did: the job's result, and the source's last run (kept across restarts). */
export const RunSummary = Type.Object(
  {
    state: StringEnum(['succeeded', 'failed', 'cancelled'] as const),
    error: Type.Optional(Type.String()),
    finished_at: Type.String({ format: 'date-time' }),
    summary: Type.String({ description: 'What the run did, in words, with the remedy for anything skipped for plan or tier reasons' }),
    found: count('Files listed (connector) or pages fetched (integration)'),
    changed: count('New or changed, indexed by the run'),
    unchanged: count('Unchanged since the last run'),
    removed: count('Documents removed: their file or page is gone or no longer selected'),
    unreadable: count('Files that could not be read, pages that could not be reached (their documents are kept)'),
    excluded: count('Links outside CONNECTOR_ALLOWED_PATHS; pages disallowed by robots.txt, off the site, refused or gone (404/410)'),
    skipped: Type.Object(
      {
        plan_document_limit: count("Over the plan's document count"),
        plan_storage_limit: count("Over the plan's total storage"),
        tier_required: count('Of a type a higher plan indexes (CSV, XLSX and HTML need PRO)'),
        unsupported_type: count('Of a type Hearth does not index (images without OCR)'),
        too_large: count("Over the plan's file size, or the crawler's 20 MB response cap"),
      },
      { description: 'Not made documents, by reason' },
    ),
    skipped_total: count('The sum of skipped'),
  },
  { $id: 'RunSummary' },
);
export type RunSummary = Static<typeof RunSummary>;
