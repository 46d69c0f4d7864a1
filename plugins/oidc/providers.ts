import { randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import { clock } from '../../core/clock.js';
import type { OidcEnvProvider } from '../../core/config.js';
import type { SecretBox } from '../../core/crypto/secret-box.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { guardedFetchFunction } from '../../core/net/guarded-request.js';
import { assertUrlAllowed, type Network, UrlNotAllowed } from '../../core/net/ssrf-guard.js';
import type { OidcRepository, ProviderRow } from './repository.js';
import type { CreateProviderBody, ProviderTestResult, ProviderView, UpdateProviderBody } from './schemas.js';
import { UniqueName } from '../../core/unique-name.js';

/** Every request to an identity provider gives up after this long. */
const IDP_TIMEOUT_SECONDS = 5;
const DEFAULT_SCOPES = 'openid email profile';
const WELL_KNOWN = '/.well-known/openid-configuration';

/** A provider ready to sign in with, from the table or from the env fallback. */
export interface OidcProvider {
  name: string;
  displayName: string;
  clientId: string;
  clientSecret: string | undefined;
  discoveryUrl: string;
  redirectUri: string;
  scopes: string;
  adminGroups: string[];
  /** The SSRF guard lets this provider's requests reach loopback and private addresses (never metadata). */
  allowPrivateNetwork: boolean;
}

export const secretContext = (name: string) => `oidc:${name}`;

export function toProviderView(row: ProviderRow): ProviderView {
  return {
    id: row.id,
    name: row.name,
    display_name: row.display_name,
    client_id: row.client_id,
    secret_set: row.client_secret_sealed !== null,
    discovery_url: row.discovery_url,
    redirect_uri: row.redirect_uri,
    scopes: row.scopes,
    admin_groups: JSON.parse(row.admin_groups) as string[],
    allow_private_network: row.allow_private_network === 1,
    created_at: clock.iso(row.created_at),
    updated_at: clock.iso(row.updated_at),
  };
}

function isLoopback(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(url.hostname);
}

/** Every request to the provider (discovery, keys, token, userinfo) goes through the SSRF guard under its policy. */
const providerFetch = (provider: OidcProvider, network: Network) => guardedFetchFunction({ allowPrivateNetwork: provider.allowPrivateNetwork }, network);

/**
 * Discovers the provider and returns an openid-client configuration. A URL ending in the well-known
 * path is turned back into its issuer, so openid-client also checks the document's issuer.
 * Plain http is allowed only to a loopback address. ID tokens from the token endpoint have their
 * signature checked against the provider's jwks_uri too (openid-client skips that by default).
 */
async function discover(provider: OidcProvider, network: Network): Promise<client.Configuration> {
  const url = new URL(provider.discoveryUrl);
  const server = url.search === '' && url.pathname.endsWith(WELL_KNOWN) ? new URL(url.href.slice(0, -WELL_KNOWN.length)) : url;
  const secret = provider.clientSecret;
  return client.discovery(server, provider.clientId, secret ? { client_secret: secret } : undefined, secret ? client.ClientSecretBasic(secret) : client.None(), {
    timeout: IDP_TIMEOUT_SECONDS,
    execute: [client.enableNonRepudiationChecks, ...(url.protocol === 'http:' && isLoopback(url) ? [client.allowInsecureRequests] : [])],
    [client.customFetch]: providerFetch(provider, network),
  });
}

const timedOut = (error: unknown): boolean => error instanceof Error && (error.name === 'TimeoutError' || timedOut(error.cause));
const guardRefusal = (error: unknown): UrlNotAllowed | undefined =>
  error instanceof UrlNotAllowed ? error : error instanceof Error ? guardRefusal(error.cause) : undefined;

/** A short, secret-free reason for an admin: the SSRF guard's refusal, openid-client's message (and its cause's), or "timed out". */
export function describeIdpError(error: unknown): string {
  if (timedOut(error)) return `timed out after ${IDP_TIMEOUT_SECONDS} s`;
  const refusal = guardRefusal(error);
  if (refusal) return `${refusal.url} is not allowed: ${refusal.message}`;
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return error instanceof Error ? `${error.message}${cause}` : String(error);
}

/** Provider configuration: admin CRUD over the table, and the env fallback while the table is empty (rule 13). */
export class OidcProviders {
  private readonly names: UniqueName;

  constructor(
    private readonly repository: OidcRepository,
    private readonly secretBox: SecretBox,
    private readonly envProviders: OidcEnvProvider[],
    private readonly network: Network,
  ) {
    this.names = new UniqueName((name) => repository.findProviderByName(name), () => conflict('provider_name_taken', 'An OIDC provider with this name already exists', 'body.name'));
  }

  /** Env providers that lack a client id, discovery URL or redirect URI cannot sign anyone in. */
  incompleteEnvProviders(): string[] {
    return this.envProviders.filter((env) => !completeEnv(env)).map((env) => env.name);
  }

  list(): Promise<ProviderRow[]> {
    return this.repository.listProviders();
  }

  async get(id: string): Promise<ProviderRow> {
    const row = await this.repository.findProvider(id);
    if (!row) throw notFound('OIDC provider');
    return row;
  }

  async create(input: CreateProviderBody): Promise<ProviderRow> {
    const scopes = input.scopes ?? DEFAULT_SCOPES;
    assertOpenidScope(scopes);
    assertSecureDiscovery(input.discovery_url);
    await this.names.assertFree(input.name);
    const allowPrivateNetwork = input.allow_private_network ?? false;
    await this.assertDiscoveryAllowed(input.discovery_url, allowPrivateNetwork, 'body.discovery_url');
    const now = clock.now();
    const id = randomUUID();
    await this.names.write(this.repository.insertProvider({
      id,
      name: input.name,
      display_name: input.display_name,
      client_id: input.client_id,
      client_secret_sealed: input.client_secret === undefined ? null : this.secretBox.seal(input.client_secret, secretContext(input.name)),
      discovery_url: input.discovery_url,
      redirect_uri: input.redirect_uri,
      scopes,
      admin_groups: JSON.stringify(input.admin_groups ?? []),
      allow_private_network: allowPrivateNetwork ? 1 : 0,
      created_at: now,
      updated_at: now,
    }));
    return this.get(id);
  }

  async update(id: string, input: UpdateProviderBody): Promise<ProviderRow> {
    const row = await this.get(id);
    if (input.scopes !== undefined) assertOpenidScope(input.scopes);
    if (input.discovery_url !== undefined) assertSecureDiscovery(input.discovery_url);
    const name = input.name ?? row.name;
    await this.names.assertFree(name, id);
    // The saved URL is judged again under a changed policy, and a changed URL under the policy it will have.
    if (input.discovery_url !== undefined || input.allow_private_network !== undefined) {
      const field = input.discovery_url !== undefined ? 'body.discovery_url' : 'body.allow_private_network';
      await this.assertDiscoveryAllowed(input.discovery_url ?? row.discovery_url, input.allow_private_network ?? row.allow_private_network === 1, field);
    }
    // The secret is sealed for its provider's name, so a rename re-seals the kept secret.
    const secret = input.client_secret === undefined ? this.openSecret(row) : (input.client_secret ?? undefined);
    await this.names.write(this.repository.updateProvider(id, {
      name,
      ...(input.display_name !== undefined ? { display_name: input.display_name } : {}),
      ...(input.client_id !== undefined ? { client_id: input.client_id } : {}),
      client_secret_sealed: secret === undefined ? null : this.secretBox.seal(secret, secretContext(name)),
      ...(input.discovery_url !== undefined ? { discovery_url: input.discovery_url } : {}),
      ...(input.redirect_uri !== undefined ? { redirect_uri: input.redirect_uri } : {}),
      ...(input.scopes !== undefined ? { scopes: input.scopes } : {}),
      ...(input.admin_groups !== undefined ? { admin_groups: JSON.stringify(input.admin_groups) } : {}),
      ...(input.allow_private_network !== undefined ? { allow_private_network: input.allow_private_network ? 1 : 0 } : {}),
      updated_at: clock.now(),
    }));
    return this.get(id);
  }

  /** Decided by the delete itself: of deletes sent together, one removes the provider and the others find none (404). */
  async delete(id: string): Promise<void> {
    if (!(await this.repository.deleteProvider(id))) throw notFound('OIDC provider');
  }

  /** The login page's providers: the table's, or the complete env ones only while the table is empty. */
  async listed(): Promise<{ name: string; displayName: string }[]> {
    const rows = await this.repository.listProviders();
    if (rows.length > 0) return rows.map((row) => ({ name: row.name, displayName: row.display_name }));
    return this.envProviders.filter(completeEnv).map((env) => ({ name: env.name, displayName: env.name }));
  }

  /** One provider to sign in with, under the same table-or-env rule as listed(). */
  async usableByName(name: string): Promise<OidcProvider> {
    if ((await this.repository.providerCount()) > 0) {
      const row = await this.repository.findProviderByName(name);
      if (row) return this.fromRow(row);
    } else {
      const env = this.envProviders.find((candidate) => candidate.name === name);
      if (env && completeEnv(env)) return { ...env, displayName: env.name };
    }
    throw notFound('OIDC provider');
  }

  /** Fetches the discovery document and the signing keys, each within the timeout; never throws. */
  async test(id: string): Promise<ProviderTestResult> {
    const provider = this.fromRow(await this.get(id));
    try {
      const metadata = (await this.discover(provider)).serverMetadata();
      const found = {
        issuer: metadata.issuer,
        authorization_endpoint: metadata.authorization_endpoint,
        token_endpoint: metadata.token_endpoint,
        jwks_uri: metadata.jwks_uri,
      };
      const missing = Object.entries(found).find(([, value]) => !value)?.[0];
      if (missing) return { ok: false, ...found, error: `the discovery document has no ${missing}` };
      const keys = await providerFetch(provider, this.network)(found.jwks_uri!, { signal: AbortSignal.timeout(IDP_TIMEOUT_SECONDS * 1000) });
      const body = keys.ok ? ((await keys.json()) as { keys?: unknown }) : undefined;
      if (!Array.isArray(body?.keys)) return { ok: false, ...found, error: `jwks_uri answered ${keys.status} without a key set` };
      return { ok: true, ...found };
    } catch (error) {
      return { ok: false, error: describeIdpError(error) };
    }
  }

  /** The provider's openid-client configuration, every request guarded. */
  discover(provider: OidcProvider): Promise<client.Configuration> {
    return discover(provider, this.network);
  }

  private fromRow(row: ProviderRow): OidcProvider {
    return {
      name: row.name,
      displayName: row.display_name,
      clientId: row.client_id,
      clientSecret: this.openSecret(row),
      discoveryUrl: row.discovery_url,
      redirectUri: row.redirect_uri,
      scopes: row.scopes,
      adminGroups: JSON.parse(row.admin_groups) as string[],
      allowPrivateNetwork: row.allow_private_network === 1,
    };
  }

  private openSecret(row: ProviderRow): string | undefined {
    if (row.client_secret_sealed === null) return undefined;
    try {
      return this.secretBox.open(row.client_secret_sealed, secretContext(row.name));
    } catch {
      // Goes to the log only (the answer is a plain 500); names the provider, never the value.
      throw new Error(`the client secret of OIDC provider "${row.name}" cannot be opened: was MFA_ENCRYPTION_KEY changed?`);
    }
  }

  /** The discovery URL must pass the SSRF guard under the provider's policy (400 url_not_allowed / url_unresolvable). */
  private async assertDiscoveryAllowed(discoveryUrl: string, allowPrivateNetwork: boolean, field: string): Promise<void> {
    await assertUrlAllowed(new URL(discoveryUrl), { allowPrivateNetwork }, this.network.resolve, field);
  }
}

type CompleteEnvProvider = OidcEnvProvider & { clientId: string; discoveryUrl: string; redirectUri: string };
function completeEnv(env: OidcEnvProvider): env is CompleteEnvProvider {
  return !!env.clientId && !!env.discoveryUrl && !!env.redirectUri;
}

/** openid-client refuses plain http except where discover() allows it, so say so when the provider is saved. */
function assertSecureDiscovery(discoveryUrl: string): void {
  const url = new URL(discoveryUrl);
  if (url.protocol !== 'https:' && !isLoopback(url)) {
    throw badRequest('insecure_discovery_url', 'discovery_url must use https (plain http only for a loopback address)', 'body.discovery_url');
  }
}

function assertOpenidScope(scopes: string): void {
  if (!scopes.split(' ').includes('openid')) throw badRequest('scopes_missing_openid', 'scopes must include openid', 'body.scopes');
}
