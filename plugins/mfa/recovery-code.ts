import { randomBytes, randomInt, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: { N: number; r: number; p: number }) => Promise<Buffer>;

export const RECOVERY_CODE_COUNT = 10;
/** No 0/O, 1/I/L or U: codes are read off paper. 30 symbols × 10 ≈ 49 bits each. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';
const LENGTH = 10;
/** Node's default scrypt cost: each code has ~49 bits of entropy, so this already makes a stolen table useless. */
const PARAMS = { N: 16_384, r: 8, p: 1 };
const KEY_BYTES = 32;

/** "ABCDE-FGHJK": what the user is shown once. */
export function newRecoveryCode(): string {
  const symbols = Array.from({ length: LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  return `${symbols.slice(0, 5)}-${symbols.slice(5)}`;
}

/** Case, spaces and dashes do not matter when a code is typed back. */
function normaliseRecoveryCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

/** Stored form: scrypt$N$r$p$<salt>$<hash>, base64url; a fresh salt per code. */
export async function hashRecoveryCode(code: string): Promise<{ id: string; hash: string }> {
  const salt = randomBytes(16);
  const key = await scryptAsync(normaliseRecoveryCode(code), salt, KEY_BYTES, PARAMS);
  return { id: randomUUID(), hash: ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$') };
}

export async function recoveryCodeMatches(code: string, stored: string): Promise<boolean> {
  const [kind, N, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(normaliseRecoveryCode(code), Buffer.from(salt, 'base64url'), expected.length, { N: Number(N), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}
