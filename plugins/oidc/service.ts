import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import * as client from 'openid-client';
import type { Role } from '../../core/auth/guard.js';
import { clock } from '../../core/clock.js';
import { isUniqueViolation } from '../../core/db/sqlite-errors.js';
import type { SecretBox } from '../../core/crypto/secret-box.js';
import { HttpError, badRequest } from '../../core/errors.js';
import type { GroupsService } from '../groups/index.js';
import type { SessionService, TokenPair } from '../sessions/index.js';
import type { UsersService } from '../users/index.js';
import { type OidcProvider, type OidcProviders, describeIdpError } from './providers.js';
import type { OidcRepository } from './repository.js';
import { digestSecret } from '../../core/crypto/secret-digest.js';

/** A started login may be finished within 10 minutes, once. */
export const LOGIN_STATE_TTL_MS = 10 * 60 * 1000;
/** The web UI must redeem its handoff within 60 s, once. */
export const HANDOFF_TTL_MS = 60 * 1000;
const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{2,63}$/;

const sha256 = digestSecret;
export const verifierContext = (stateHash: string) => `oidc-state:${stateHash}`;

function sameString(a: string, b: string): boolean {
  const [left, right] = [Buffer.from(a), Buffer.from(b)];
  return left.length === right.length && timingSafeEqual(left, right);
}

const stateInvalid = () => badRequest('oidc_state_invalid', 'The login state is unknown, expired, already used or from another browser; start the login again');
const loginFailed = () => new HttpError(401, 'oidc_login_failed', 'The identity provider login could not be completed or verified');
const handoffInvalid = () => new HttpError(401, 'oidc_handoff_invalid', 'No pending sign-in: the handoff is missing, expired or already used');
const unreachable = () => new HttpError(502, 'oidc_provider_unreachable', 'The identity provider could not be reached');

type Claims = Record<string, unknown> & { iss: string; sub: string };

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.length > 0) : [];
}

/** A valid local username from the claims: preferred_username, else email, else provider-sub. */
function baseUsername(claims: Claims, provider: string): string {
  for (const candidate of [claims.preferred_username, claims.email, `${provider}-${claims.sub}`]) {
    if (typeof candidate !== 'string') continue;
    const cleaned = candidate.replace(/[^A-Za-z0-9._@-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 56);
    if (USERNAME_PATTERN.test(cleaned)) return cleaned;
  }
  return `${provider}-user`.slice(0, 56);
}

/** Authorization Code flow with PKCE S256, state and nonce; provisioning; the handoff to the web UI. */
export class OidcService {
  constructor(
    private readonly repository: OidcRepository,
    private readonly providers: OidcProviders,
    private readonly users: UsersService,
    private readonly sessions: SessionService,
    private readonly secretBox: SecretBox,
    private readonly log: FastifyBaseLogger,
    /** Claim groups become groups (created when missing) at a user's first sign-in. */
    private readonly groups: Pick<GroupsService, 'joinClaimGroups'>,
  ) {}

  /** Starts a login: the identity provider's URL, and the state the caller binds to this browser. */
  async start(providerName: string): Promise<{ url: string; state: string }> {
    const provider = await this.providers.usableByName(providerName);
    const config = await this.discover(provider);
    const [codeVerifier, state, nonce] = [client.randomPKCECodeVerifier(), client.randomState(), client.randomNonce()];
    const stateHash = sha256(state);
    const now = clock.now();
    await this.repository.deleteLoginStatesBefore(now - LOGIN_STATE_TTL_MS);
    await this.repository.insertLoginState({
      state_hash: stateHash,
      provider: provider.name,
      code_verifier_sealed: this.secretBox.seal(codeVerifier, verifierContext(stateHash)),
      nonce,
      created_at: now,
      consumed_at: null,
    });
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: provider.redirectUri,
      scope: provider.scopes,
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, state };
  }

  /**
   * Finishes a login from the authorization response: the state must match this browser's and be
   * fresh and unused; openid-client checks the code exchange, PKCE, the ID token and its nonce.
   * Returns a one-time handoff code for the web UI, and who signed in.
   */
  async finish(
    providerName: string,
    query: Record<string, string | undefined>,
    browserState: string | undefined,
  ): Promise<{ handoff: string; userId: string; created: boolean }> {
    const provider = await this.providers.usableByName(providerName);
    const state = query.state;
    if (!state || !browserState || !sameString(state, browserState)) throw stateInvalid();
    const now = clock.now();
    const started = await this.repository.consumeLoginState(sha256(state), provider.name, now - LOGIN_STATE_TTL_MS, now);
    if (!started) throw stateInvalid();

    const config = await this.discover(provider);
    const response = new URL(provider.redirectUri);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) response.searchParams.set(key, value);
    let claims: Claims;
    try {
      const tokens = await client.authorizationCodeGrant(config, response, {
        pkceCodeVerifier: this.secretBox.open(started.code_verifier_sealed, verifierContext(started.state_hash)),
        expectedState: state,
        expectedNonce: started.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      const userinfo = config.serverMetadata().userinfo_endpoint ? await client.fetchUserInfo(config, tokens.access_token, idToken.sub) : {};
      // The signed ID token wins over userinfo for every claim both carry.
      claims = { ...userinfo, ...idToken } as Claims;
    } catch (error) {
      this.log.warn({ provider: provider.name, reason: describeIdpError(error) }, 'oidc login refused');
      throw loginFailed();
    }
    const { userId, created } = await this.provision(provider, claims);
    return { handoff: await this.issueHandoff(userId), userId, created };
  }

  /** Redeems a handoff code for a token pair; each code works once, within 60 s. */
  async redeem(code: string | undefined): Promise<TokenPair> {
    if (!code) throw handoffInvalid();
    const now = clock.now();
    const userId = await this.repository.consumeHandoff(sha256(code), now - HANDOFF_TTL_MS, now);
    const user = userId ? await this.users.find(userId) : undefined;
    if (!user) throw handoffInvalid();
    return this.sessions.start(user);
  }

  /** Finds the user of (issuer, sub), or creates one; role and groups are set only here, at first login. */
  private async provision(provider: OidcProvider, claims: Claims): Promise<{ userId: string; created: boolean }> {
    const known = await this.repository.findIdentityUser(claims.iss, claims.sub);
    if (known) return { userId: known, created: false };
    const groups = stringList(claims.groups);
    const role: Role = groups.some((group) => provider.adminGroups.includes(group)) ? 'admin' : 'viewer';
    const email = typeof claims.email === 'string' && /^[^\s@]+@[^\s@]+$/.test(claims.email) && claims.email.length <= 254 ? claims.email : null;
    const input = { usernameBase: baseUsername(claims, provider.name), email, role };
    try {
      // The claim groups are made and joined in one transaction (none deleted or renamed meanwhile stays named by the
      // user), before the identity is linked: a sign-in of the same identity that finds the link finds them too.
      const link = async (id: string) => {
        await this.groups.joinClaimGroups(id, groups);
        await this.repository.insertIdentity({ issuer: claims.iss, subject: claims.sub, provider: provider.name, user_id: id, created_at: clock.now() });
      };
      return { userId: await this.users.createExternal(input, link), created: true };
    } catch (error) {
      // A first sign-in of the same identity at the same moment linked its user first (the key refused this one's,
      // whose user is gone again): that user is this sign-in's too, as it would be one after the other.
      const first = isUniqueViolation(error) ? await this.repository.findIdentityUser(claims.iss, claims.sub) : undefined;
      if (!first) throw error;
      return { userId: first, created: false };
    }
  }

  private async issueHandoff(userId: string): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    const now = clock.now();
    await this.repository.deleteHandoffsBefore(now - HANDOFF_TTL_MS);
    await this.repository.insertHandoff(sha256(code), userId, now);
    return code;
  }

  private async discover(provider: OidcProvider): Promise<client.Configuration> {
    try {
      return await this.providers.discover(provider);
    } catch (error) {
      this.log.warn({ provider: provider.name, reason: describeIdpError(error) }, 'oidc discovery failed');
      throw unreachable();
    }
  }
}
