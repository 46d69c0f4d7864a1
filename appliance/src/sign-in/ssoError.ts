/**
 * What the sign-in page says when a failed single sign-on sent the browser back with ?sso_error=<code>.
 * Only these fixed sentences are shown: the URL's text itself never reaches the page.
 */
const MESSAGES: Record<string, string> = {
  oidc_login_failed: 'Single sign-on failed: the identity provider’s login could not be completed or verified. Try again, or sign in with your password.',
  oidc_state_invalid: 'Single sign-on failed: the sign-in attempt expired or was started in another browser. Start it again from this page.',
  oidc_provider_unreachable: 'Single sign-on failed: the identity provider could not be reached. Try again later, or sign in with your password.',
  not_found: 'Single sign-on failed: this sign-in provider is not configured.',
  tier_required: 'Single sign-on is not available on this plan.',
  too_many_requests: 'Single sign-on failed: too many attempts. Wait a minute and try again.',
};
const GENERIC = 'Single sign-on failed. Try again, or sign in with your password.';

export const ssoErrorMessage = (code: string): string => (Object.hasOwn(MESSAGES, code) ? MESSAGES[code] : GENERIC);
