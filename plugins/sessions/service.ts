import { randomUUID } from 'node:crypto';
import type { IdentityResolver, Principal, Role } from '../../core/auth/guard.js';
import type { TokenClaims, TokenService } from '../../core/auth/tokens.js';
import { clock } from '../../core/clock.js';
import { unauthorized } from '../../core/errors.js';
import type { SettingsStore } from '../../core/settings/store.js';
import type { Entitlement } from '../../core/tiers.js';
import type { UsersRepository } from '../users/repository.js';
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
  constructor(
    private readonly repository: SessionsRepository,
    private readonly users: UsersRepository,
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
      throw unauthorized('Refresh token already used; the session has been ended');
    }
    return this.pair(principal, claims.sid, nextJti);
  }

  async resolve(claims: TokenClaims): Promise<Principal> {
    const row = await this.repository.principal(claims.sub, claims.sid);
    if (!row || row.session_revoked_at !== null) throw unauthorized('Session ended');
    const watermark = Math.max(row.tokens_valid_after, this.settings.get<number>(GLOBAL_WATERMARK_KEY, 0));
    if (claims.iat_ms < watermark) throw unauthorized('Token revoked');
    return {
      id: row.id,
      username: row.username,
      role: row.role,
      email: row.email,
      groups: JSON.parse(row.groups) as string[],
      sessionId: claims.sid,
    };
  }

  async revokeAll(): Promise<number> {
    const now = clock.now();
    await this.settings.set({ [GLOBAL_WATERMARK_KEY]: now });
    await this.repository.revokeAll(now);
    return now;
  }

  async revokeUser(userId: string): Promise<number> {
    const now = clock.now();
    await this.users.setTokensValidAfter(userId, now);
    await this.repository.revokeUser(userId, now);
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
