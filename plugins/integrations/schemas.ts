import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/schemas.js';
import { RunSummary } from '../jobs/index.js';

const INTEGRATION_KINDS = ['web'] as const;

const HttpUrl = Type.String({ format: 'uri', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' });
const NameSchema = Type.String({ minLength: 1, maxLength: 100, pattern: '^\\S(.*\\S)?$' });

const WebConfigSchema = Type.Object(
  {
    start_url: Type.Optional(HttpUrl),
    sitemap_url: Type.Optional(HttpUrl),
    max_depth: Type.Integer({ minimum: 0, maximum: 10, default: 2 }),
    max_pages: Type.Integer({ minimum: 1, maximum: 10_000, default: 200 }),
    allow_private_network: Type.Boolean({
      default: false,
      description: 'Allow loopback, private and link-local addresses (a site on the LAN). Cloud metadata addresses stay refused.',
    }),
    user_agent: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x20-\\x7e]+$' })),
  },
  { additionalProperties: false, description: 'start_url or sitemap_url (or both, on one origin) is required; the sitemap’s pages join the start URL at depth 0' },
);

/** Write-only: sealed at rest, never returned. */
const CredentialsSchema = Type.Union(
  [
    Type.Object(
      { username: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:]*$' }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
      { additionalProperties: false },
    ),
    Type.Object({ bearer_token: Type.String({ minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$' }) }, { additionalProperties: false }),
  ],
  { writeOnly: true, description: 'HTTP Basic ({ username, password }) or a bearer token ({ bearer_token }), sent only to the site itself' },
);

export const IntegrationView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    kind: StringEnum(INTEGRATION_KINDS),
    config: Type.Object({
      start_url: Type.Optional(Type.String()),
      sitemap_url: Type.Optional(Type.String()),
      max_depth: Type.Integer(),
      max_pages: Type.Integer(),
      allow_private_network: Type.Boolean(),
      user_agent: Type.Optional(Type.String()),
    }),
    credentials_set: Type.Boolean({ description: 'Whether credentials are stored; they are never returned' }),
    enabled: Type.Boolean(),
    document_count: Type.Integer(),
    last_sync_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a sync last succeeded' }),
    last_sync: Type.Union([RunSummary, Type.Null()], { description: 'What the last sync that ended did (succeeded, failed or cancelled), kept across restarts' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Integration' },
);
export type IntegrationView = Static<typeof IntegrationView>;

export const CreateIntegrationBody = Type.Object(
  {
    name: NameSchema,
    kind: StringEnum(INTEGRATION_KINDS),
    config: WebConfigSchema,
    credentials: Type.Optional(CredentialsSchema),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateIntegrationBody = Static<typeof CreateIntegrationBody>;

export const UpdateIntegrationBody = Type.Object(
  {
    name: Type.Optional(NameSchema),
    config: Type.Optional(WebConfigSchema),
    credentials: Type.Optional(Type.Union([CredentialsSchema, Type.Null()], { description: 'New credentials, or null to remove them' })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBody>;

export const IntegrationIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ListIntegrationsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const IntegrationList = Type.Object({ integrations: Type.Array(IntegrationView), total: Type.Integer() });
