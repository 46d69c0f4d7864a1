import { Type, type Static } from 'typebox';

/** Stored names are lower case; env fallback names may use any case, so public paths accept both. */
const ProviderNameSchema = Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9][a-z0-9_-]*$' });
const HttpUrl = Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' });
const Scopes = Type.String({ minLength: 6, maxLength: 1024, pattern: '^[\\x21-\\x7e]+( [\\x21-\\x7e]+)*$', description: 'Space-separated; must include openid' });
const AdminGroups = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 100 });
const ClientSecret = Type.String({ minLength: 1, maxLength: 1024, writeOnly: true });
const ALLOW_PRIVATE_NETWORK =
  'Lets Hearth reach this provider (discovery, keys, token and userinfo endpoints) on loopback, private or link-local addresses; cloud metadata addresses are refused regardless';

export const ProviderView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    display_name: Type.String(),
    client_id: Type.String(),
    secret_set: Type.Boolean({ description: 'Whether a client secret is stored; the secret itself is never returned' }),
    discovery_url: Type.String(),
    redirect_uri: Type.String(),
    scopes: Type.String(),
    admin_groups: Type.Array(Type.String()),
    allow_private_network: Type.Boolean({ description: ALLOW_PRIVATE_NETWORK }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'OidcProvider' },
);
export type ProviderView = Static<typeof ProviderView>;

export const CreateProviderBody = Type.Object(
  {
    name: ProviderNameSchema,
    display_name: Type.String({ minLength: 1, maxLength: 64 }),
    client_id: Type.String({ minLength: 1, maxLength: 512 }),
    client_secret: Type.Optional(ClientSecret),
    discovery_url: HttpUrl,
    redirect_uri: HttpUrl,
    scopes: Type.Optional(Scopes),
    admin_groups: Type.Optional(AdminGroups),
    allow_private_network: Type.Optional(Type.Boolean({ description: ALLOW_PRIVATE_NETWORK, default: false })),
  },
  { additionalProperties: false },
);
export type CreateProviderBody = Static<typeof CreateProviderBody>;

export const UpdateProviderBody = Type.Object(
  {
    name: Type.Optional(ProviderNameSchema),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    client_secret: Type.Optional(Type.Union([ClientSecret, Type.Null()], { description: 'A new secret, or null to remove it' })),
    discovery_url: Type.Optional(HttpUrl),
    redirect_uri: Type.Optional(HttpUrl),
    scopes: Type.Optional(Scopes),
    admin_groups: Type.Optional(AdminGroups),
    allow_private_network: Type.Optional(Type.Boolean({ description: ALLOW_PRIVATE_NETWORK })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateProviderBody = Static<typeof UpdateProviderBody>;

export const ProviderIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ProviderNameParams = Type.Object({ provider_id: Type.String({ minLength: 1, maxLength: 63, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' }) });

export const ProviderTestResult = Type.Object({
  ok: Type.Boolean(),
  issuer: Type.Optional(Type.String()),
  authorization_endpoint: Type.Optional(Type.String()),
  token_endpoint: Type.Optional(Type.String()),
  jwks_uri: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
});
export type ProviderTestResult = Static<typeof ProviderTestResult>;

export const PublicProviderList = Type.Array(
  Type.Object({ name: Type.String(), display_name: Type.String(), login_url: Type.String() }),
);

/** No parameters at all: in particular a code_challenge_method cannot be chosen by the caller. */
export const LoginQuery = Type.Object({}, { additionalProperties: false });

/** The authorization response; providers add their own parameters (iss, session_state), so others pass. */
export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
});
