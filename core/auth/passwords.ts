import argon2 from 'argon2';
import { badRequest } from '../errors.js';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../config.js';

/** OWASP's argon2id profile (19 MiB, t=2, p=1): strong, and affordable on a Jetson. */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

let decoyHash: Promise<string> | undefined;

/**
 * Verifies against a throwaway hash of the same cost, so an unknown username takes as long as a
 * wrong password and the two cannot be told apart by timing.
 */
export async function burnPasswordCheck(password: string): Promise<false> {
  decoyHash ??= hashPassword('decoy-password-for-unknown-users');
  await verifyPassword(await decoyHash, password);
  return false;
}

/**
 * The password policy: 12 to 256 characters, not the username, not the documented default.
 * Length beats composition rules (NIST SP 800-63B).
 */
export function assertPasswordPolicy(password: string, username: string, field = 'body.password'): void {
  if (password.length < PASSWORD_MIN_LENGTH) {
    throw badRequest('weak_password', `Passwords need at least ${PASSWORD_MIN_LENGTH} characters`, field);
  }
  if (password.length > PASSWORD_MAX_LENGTH) {
    throw badRequest('weak_password', `Passwords have at most ${PASSWORD_MAX_LENGTH} characters`, field);
  }
  if (password.toLowerCase() === username.toLowerCase()) {
    throw badRequest('weak_password', 'The password must not be the username', field);
  }
  if (password === DOCUMENTED_DEFAULT_ADMIN_PASSWORD) {
    throw badRequest('weak_password', 'The documented default password cannot be chosen', field);
  }
}
