import { createHash } from 'node:crypto';

/**
 * How one-time bearer secrets (reset tokens, MFA tokens, OIDC state and hand-off codes) are stored:
 * their sha256. They are 32 random bytes, so no salt or slow hash is needed; a database leak
 * reveals no usable token.
 */
export function digestSecret(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
