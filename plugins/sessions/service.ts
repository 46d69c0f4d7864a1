import { randomUUID } from 'node:crypto';
import type { IdentityResolver, Principal, Role } from '../../core/auth/guard.js';
import type { TokenClaims, TokenService } from '../../core/auth/tokens.js';
import { clock } from '../../core/clock.js';
import { unauthorized } from '../../core/errors.js';
import type { SettingsStore } from '../../core/settings/store.js';
import type { Entitlement } from '../../core/tiers.js';
import type { UserProfileRow, UsersService } from '../users/index.js';
import type { SessionsRepository } from './repository.js';

/** Settings keys of the runtime token lifetimes (the first two are the spec's seed variables). */
export const LIFETIME_KEYS = {
  access: 'ACCESS_TOKEN_EXPIRE_SECONDS',
  refresh: 'REFRESH_TOKEN_EXPIRE_SECONDS',
  accessAdmin: 'ACCESS_TOKEN_SECONDS_ADMIN',
  refreshAdmin: 'REFRESH_TOKEN_SECONDS_ADMIN',
} as const;
/** Global revocation watermark: tokens issued before it are refused. */
const GLOBAL_WATERMARK_KEY = 'TOKENS_VALID_AFTER';

const PRINCIPAL_CACHE_MS = 1000;
const PRINCIPAL_CACHE_SIZE = 10_000;

interface CachedPrincipal {
  principal: Principal;
  /** The same user's profile, read with it: GET /api/auth/me answers from it. */
  profile: UserProfileRow;
  tokensValidAfter: number;
  expiresAt: number;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_in: number;
}

/**
 * Login sessions: issuing token pairs, rotating refresh tokens (a reused one ends its session),
 * and revocation watermarks that survive a restart. It is also the guard's identity resolver.
 */
export class SessionService implements IdentityResolver {
  /**
   * By session id: a session belongs to one user, and the id strings come from cached token claims,
   * so a lookup hashes nothing new (a user+session key was a fresh string to hash on every request).
   */
  private readonly principals = new Map<string, CachedPrincipal>();

  constructor(
    private readonly repository: SessionsRepository,
    private readonly users: UsersService,
    private readonly tokens: TokenService,
    private readonly settings: SettingsStore,
    private readonly entitlement: Entitlement,
  ) {}

  lifetimes(role: Role): { access: number; refresh: number } {
    const access = this.settings.get<number>(LIFETIME_KEYS.access, 900);
    const refresh = this.settings.get<number>(LIFETIME_KEYS.refresh, 604_800);
    // Per-role overrides are an ENTERPRISE feature; they lie dormant on a lower plan.
    if (role !== 'admin' || this.entitlement.tier() !== 'ENTERPRISE') return { access, refresh };
    return {
      access: this.settings.get<number | null>(LIFETIME_KEYS.accessAdmin, null) ?? access,
      refresh: this.settings.get<number | null>(LIFETIME_KEYS.refreshAdmin, null) ?? refresh,
    };
  }

  /** Opens a session for a user who has proved who they are. */
  async start(user: { id: string; role: Role }): Promise<TokenPair> {
    const sessionId = randomUUID();
    const refreshJti = randomUUID();
    await this.repository.create({ id: sessionId, user_id: user.id, refresh_jti: refreshJti, now: clock.now() });
    return this.pair(user, sessionId, refreshJti);
  }

  /** Exchanges a refresh token for a new pair; the old refresh token is spent. */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const claims = this.tokens.check(refreshToken, 'refresh');
    const principal = await this.resolve(claims);
    const nextJti = randomUUID();
    if (!(await this.repository.rotate(claims.sid, claims.jti, nextJti, clock.now()))) {
      // A spent refresh token came back: someone holds a copy. End the whole session.
      await this.repository.revoke(claims.sid, clock.now());
      this.forget(claims.sub);
      throw unauthorized('Refresh token already used; the session has been ended');
    }
    return this.pair(principal, claims.sid, nextJti);
  }

  async resolve(claims: TokenClaims): Promise<Principal> {
    return this.admit(claims, await this.lookup(claims.sub, claims.sid));
  }

  resolveCached(claims: TokenClaims): Principal | undefined {
    const cached = this.fresh(claims.sub, claims.sid);
    return cached && this.admit(claims, cached);
  }

  /** The principal of a token whose user and session are known, unless a revocation watermark refuses it. */
  private admit(claims: TokenClaims, { principal, tokensValidAfter }: CachedPrincipal): Principal {
    const watermark = Math.max(tokensValidAfter, this.settings.get<number>(GLOBAL_WATERMARK_KEY, 0));
    if (claims.iat_ms < watermark) throw unauthorized('Token revoked');
    return principal;
  }

  private fresh(userId: string, sessionId: string): CachedPrincipal | undefined {
    const cached = this.principals.get(sessionId);
    return cached && cached.principal.id === userId && cached.expiresAt > clock.now() ? cached : undefined;
  }

  /**
   * The user and session behind a token, cached briefly: it is read on every request. Every change
   * this process makes (revocation, role, password, deletion) drops the cache at once; the short
   * lifetime bounds anything else.
   */
  private async lookup(userId: string, sessionId: string): Promise<CachedPrincipal> {
    const cached = this.fresh(userId, sessionId);
    if (cached) return cached;
    const [session, user] = await Promise.all([this.repository.state(sessionId), this.users.find(userId)]);
    if (!session || !user || session.user_id !== userId || session.revoked_at !== null) {
      this.principals.delete(sessionId);
      throw unauthorized('Session ended');
    }
    if (this.principals.size >= PRINCIPAL_CACHE_SIZE) this.principals.clear();
    const { hashed_password: _hash, tokens_valid_after: tokensValidAfter, ...profile } = user;
    const entry: CachedPrincipal = {
      principal: { id: user.id, username: user.username, role: user.role, email: user.email, groups: JSON.parse(user.groups) as string[], sessionId },
      profile,
      tokensValidAfter,
      expiresAt: clock.now() + PRINCIPAL_CACHE_MS,
    };
    this.principals.set(sessionId, entry);
    return entry;
  }

  /**
   * The profile of a principal this request resolved, as fresh as the principal itself (the
   * cache entry the guard just used); undefined when it has expired or was dropped since.
   */
  profile(principal: Principal): UserProfileRow | undefined {
    return this.fresh(principal.id, principal.sessionId)?.profile;
  }

  /** Drops cached identities (one user's, or all): called after every change to a user, their TOTP state included. */
  forget(userId?: string): void {
    if (!userId) return this.principals.clear();
    for (const [sessionId, entry] of this.principals) if (entry.principal.id === userId) this.principals.delete(sessionId);
  }

  /** Sign-out: ends one login session, so its refresh token and access tokens stop working. */
  async end(principal: Principal): Promise<void> {
    await this.repository.revoke(principal.sessionId, clock.now());
    this.principals.delete(principal.sessionId);
  }

  async revokeAll(): Promise<number> {
    const now = clock.now();
    await this.settings.set({ [GLOBAL_WATERMARK_KEY]: now });
    await this.repository.revokeAll(now);
    this.forget();
    return now;
  }

  async revokeUser(userId: string): Promise<number> {
    const now = clock.now();
    await this.users.refuseTokensBefore(userId, now);
    await this.repository.revokeUser(userId, now);
    this.forget(userId);
    return now;
  }

  async pruneIdle(): Promise<void> {
    const longest = Math.max(this.lifetimes('viewer').refresh, this.lifetimes('admin').refresh);
    await this.repository.deleteIdleBefore(clock.now() - longest * 1000);
  }

  private pair(user: { id: string; role: Role }, sessionId: string, refreshJti: string): TokenPair {
    const lifetime = this.lifetimes(user.role);
    return {
      access_token: this.tokens.issue('access', user.id, sessionId, lifetime.access),
      refresh_token: this.tokens.issue('refresh', user.id, sessionId, lifetime.refresh, refreshJti),
      token_type: 'bearer',
      expires_in: lifetime.access,
    };
  }
}
