import { Type, type Static } from 'typebox';
import { JobView, RunSummary } from '../jobs/index.js';

/** Printable, not blank: a name is shown in the UI and in logs. */
const NameSchema = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$' });
/** Absolute, resolved and checked against CONNECTOR_ALLOWED_PATHS by the service (400 path_not_allowed / path_not_found). */
const PathSchema = Type.String({ minLength: 1, maxLength: 4096, description: 'Absolute path of a directory inside CONNECTOR_ALLOWED_PATHS' });
const ExtensionSchema = Type.String({ pattern: '^\\.?[A-Za-z0-9]{1,16}$', description: 'A file extension such as ".pdf" (the dot is optional, case is ignored)' });
const IncludeSchema = Type.Array(ExtensionSchema, {
  maxItems: 32,
  description: 'Extensions to index, e.g. [".pdf", ".md"]; empty (the default) indexes every supported type',
});

const fields = {
  name: NameSchema,
  path: PathSchema,
  recursive: Type.Boolean({ description: 'Also scan subdirectories (default true)' }),
  include: IncludeSchema,
  enabled: Type.Boolean({ description: 'Disabled connectors are left out of sync-all and refuse scans (default true)' }),
};

export const CreateConnectorBody = Type.Object(
  {
    name: fields.name,
    path: fields.path,
    recursive: Type.Optional(fields.recursive),
    include: Type.Optional(fields.include),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false },
);
export type CreateConnectorBody = Static<typeof CreateConnectorBody>;

export const UpdateConnectorBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    path: Type.Optional(fields.path),
    recursive: Type.Optional(fields.recursive),
    include: Type.Optional(fields.include),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateConnectorBody = Static<typeof UpdateConnectorBody>;

export const ConnectorView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    path: Type.String({ description: 'The resolved real path' }),
    recursive: Type.Boolean(),
    include: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    last_scan_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a scan last succeeded' }),
    last_scan: Type.Union([RunSummary, Type.Null()], { description: 'What the last scan that ended did (succeeded, failed or cancelled), kept across restarts' }),
    document_count: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Connector' },
);
export type ConnectorView = Static<typeof ConnectorView>;

export const ConnectorIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ConnectorList = Type.Object({ connectors: Type.Array(ConnectorView), total: Type.Integer() });
export const SyncAllResult = Type.Object({ jobs: Type.Array(JobView) });
