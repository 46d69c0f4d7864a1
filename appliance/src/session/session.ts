import { api, REFRESH_COOKIE_HEADER, refreshSession, tokens } from '../api/client';
import { ApiError } from '../api/errors';
import type { License, Role, Tier, TokenPair, User } from '../api/types';
import { createStore } from '../store';

export interface SessionState {
  status: 'loading' | 'signed-out' | 'signed-in';
  user: User | null;
  tier: Tier;
  /** The admin signed in with the documented default password, which still opens the account. */
  defaultPassword: boolean;
  /** Said on the sign-in page: why the session ended, or why single sign-on failed. */
  notice?: string;
}

export const session = createStore<SessionState>({ status: 'loading', user: null, tier: 'FREE', defaultPassword: false });

/** The documented first-boot password (README): signing in with it means it is still in force. */
export const DOCUMENTED_DEFAULT_PASSWORD = 'hearth-change-me';
/** Set before leaving for the identity provider; the landing back at / redeems the handoff once. */
const SSO_PENDING = 'hearth.sso-pending';
/** Per tab, a flag only (never a secret): the banner survives a reload until the password is changed. */
const DEFAULT_PASSWORD_FLAG = 'hearth.default-password';

tokens.onSessionEnded(() => {
  if (session.get().status !== 'signed-in') return;
  session.set({ status: 'signed-out', user: null, tier: 'FREE', defaultPassword: false, notice: 'Your session has ended. Sign in again.' });
});

async function loadIdentity(): Promise<void> {
  const [user, license] = await Promise.all([
    api<User>('/api/auth/me'),
    api<License>('/api/license').catch(() => ({ tier: 'FREE' as Tier })),
  ]);
  const defaultPassword = user.role === 'admin' && sessionStorage.getItem(DEFAULT_PASSWORD_FLAG) === user.id;
  session.set({ status: 'signed-in', user, tier: license.tier, defaultPassword });
}

/** After a login step returned a token pair (its refresh token went into the cookie). */
export async function beginSession(pair: TokenPair, { usedDefaultPassword = false } = {}): Promise<void> {
  tokens.set(pair.access_token);
  if (usedDefaultPassword) {
    const user = await api<User>('/api/auth/me');
    if (user.role === 'admin') sessionStorage.setItem(DEFAULT_PASSWORD_FLAG, user.id);
  }
  await loadIdentity();
}

/** The default password was changed: the banner goes, and the new pair replaces the old (other sessions ended). */
export function defaultPasswordChanged(pair: TokenPair): void {
  tokens.set(pair.access_token);
  sessionStorage.removeItem(DEFAULT_PASSWORD_FLAG);
  session.update((state) => ({ ...state, defaultPassword: false }));
}

export function markSsoPending(): void {
  sessionStorage.setItem(SSO_PENDING, '1');
}

/** Redeems the OIDC handoff cookie the callback set (POST /api/auth/oidc/session). */
async function redeemSso(): Promise<void> {
  sessionStorage.removeItem(SSO_PENDING);
  try {
    const pair = await api<TokenPair>('/api/auth/oidc/session', { method: 'POST', headers: REFRESH_COOKIE_HEADER });
    await beginSession(pair);
  } catch (error) {
    const reason = error instanceof ApiError ? error.message : 'the identity provider did not complete the sign-in';
    session.set({ status: 'signed-out', user: null, tier: 'FREE', defaultPassword: false, notice: `Single sign-on failed: ${reason}` });
  }
}

/** At page load: back from the identity provider, or an existing session through the refresh cookie, or signed out. */
export async function resumeSession(): Promise<void> {
  if (sessionStorage.getItem(SSO_PENDING)) {
    // A failed callback sends the browser back with ?sso_error (the sign-in page words it): no handoff to redeem.
    if (!new URLSearchParams(window.location.search).has('sso_error')) return redeemSso();
    sessionStorage.removeItem(SSO_PENDING);
  }
  try {
    if (await refreshSession()) return await loadIdentity();
  } catch {
    // fall through: signed out
  }
  tokens.clear();
  session.set({ status: 'signed-out', user: null, tier: 'FREE', defaultPassword: false });
}

/** The session was ended by the service (every session revoked, this one included): back to the sign-in page, saying why. */
export function sessionEnded(notice: string): void {
  tokens.clear();
  sessionStorage.removeItem(DEFAULT_PASSWORD_FLAG);
  session.set({ status: 'signed-out', user: null, tier: 'FREE', defaultPassword: false, notice });
}

/** A license was applied: the nav and the page locks follow the new tier at once. */
export const tierChanged = (tier: Tier) => session.update((state) => ({ ...state, tier }));

/** The signed-in user's own account changed (email, second factor). */
export const userChanged = (user: User) => session.update((state) => ({ ...state, user }));

export async function signOut(): Promise<void> {
  try {
    await api('/api/auth/logout', { method: 'POST' });
  } catch {
    // The session may already be over; the page forgets it either way.
  }
  tokens.clear();
  sessionStorage.removeItem(DEFAULT_PASSWORD_FLAG);
  session.set({ status: 'signed-out', user: null, tier: 'FREE', defaultPassword: false, notice: 'You have signed out.' });
}

const ROLE_ORDER: Role[] = ['viewer', 'editor', 'admin'];
const TIER_ORDER: Tier[] = ['FREE', 'PRO', 'ENTERPRISE'];
export const roleAtLeast = (actual: Role | undefined, needed: Role) => !!actual && ROLE_ORDER.indexOf(actual) >= ROLE_ORDER.indexOf(needed);
export const tierAtLeast = (actual: Tier, needed: Tier) => TIER_ORDER.indexOf(actual) >= TIER_ORDER.indexOf(needed);
