import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { StringEnum } from '../../core/schemas.js';
import { type License, PLAN_LIMITS, TIERS } from '../../core/tiers.js';

/**
 * A license key: `HEARTH-LICENSE-1.<base64url(payload JSON bytes)>.<base64url(Ed25519 signature of those bytes)>`.
 * Pure functions only: no HTTP, no storage, no clock of their own (callers pass `now`).
 */
const LICENSE_KEY_PREFIX = 'HEARTH-LICENSE-1';

const ED25519_SIGNATURE_BYTES = 64;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

const Limit = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const LicenseLimits = Type.Object({ documents: Limit, file_size_bytes: Limit, storage_bytes: Limit });

/** Unknown fields are tolerated (and ignored) so that a newer issuer does not lock out an older box. */
export const LicensePayload = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 128 }),
  licensee: Type.String({ minLength: 1, maxLength: 256 }),
  tier: StringEnum(TIERS),
  limits: Type.Optional(LicenseLimits),
  issued_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
});
export type LicensePayload = Static<typeof LicensePayload>;

export type LicenseKeyProblem = 'malformed' | 'no_public_key' | 'signature_invalid' | 'expired';
type LicenseKeyResult = { ok: true; license: License } | { ok: false; problem: LicenseKeyProblem; detail: string };

const fail = (problem: LicenseKeyProblem, detail: string): LicenseKeyResult => ({ ok: false, problem, detail });

/** Why a payload is not a license, or undefined when it is one. */
function payloadProblem(payload: unknown): string | undefined {
  const issue = Value.Errors(LicensePayload, payload)[0];
  if (issue) return `payload${issue.instancePath.replace(/\//g, '.')} ${issue.message}`;
  const { tier, limits, issued_at, expires_at } = payload as LicensePayload;
  if (tier === 'ENTERPRISE' && !limits) return 'an ENTERPRISE licence must carry its limits';
  if (Date.parse(expires_at) <= Date.parse(issued_at)) return 'expires_at must be after issued_at';
  return undefined;
}

/** The entitlement a verified payload grants; PRO and FREE always take the plan's own limits. */
function toLicense(payload: LicensePayload): License {
  return {
    id: payload.id,
    licensee: payload.licensee,
    tier: payload.tier,
    limits: payload.tier === 'ENTERPRISE' ? { ...payload.limits! } : { ...PLAN_LIMITS[payload.tier] },
    issued_at: new Date(payload.issued_at).toISOString(),
    expires_at: new Date(payload.expires_at).toISOString(),
  };
}

/** Parses and verifies the signature; expiry is left to the caller (a stored, expired license still explains the fallback). */
export function verifyLicenseKey(text: string, publicKeys: readonly KeyObject[]): LicenseKeyResult {
  // Keys pasted from a license file arrive wrapped and indented.
  const parts = text.replace(/\s+/g, '').split('.');
  if (parts.length !== 3 || parts[0] !== LICENSE_KEY_PREFIX) {
    return fail('malformed', `a licence key has the form ${LICENSE_KEY_PREFIX}.<payload>.<signature>`);
  }
  const [, encodedPayload, encodedSignature] = parts;
  if (!BASE64URL.test(encodedPayload) || !BASE64URL.test(encodedSignature)) return fail('malformed', 'the key is not base64url encoded');
  const payloadBytes = Buffer.from(encodedPayload, 'base64url');
  const signature = Buffer.from(encodedSignature, 'base64url');
  if (signature.length !== ED25519_SIGNATURE_BYTES) return fail('malformed', 'the signature has the wrong length');

  let payload: unknown;
  try {
    payload = JSON.parse(payloadBytes.toString('utf8'));
  } catch {
    return fail('malformed', 'the payload is not JSON');
  }
  const problem = payloadProblem(payload);
  if (problem) return fail('malformed', problem);

  if (publicKeys.length === 0) return fail('no_public_key', 'no licence public key is configured');
  if (!publicKeys.some((key) => verify(null, payloadBytes, key, signature))) {
    return fail('signature_invalid', 'the signature does not match any configured licence public key');
  }
  return { ok: true, license: toLicense(payload as LicensePayload) };
}

/** verifyLicenseKey plus expiry at `now`: what a newly applied key must pass. */
export function checkLicenseKey(text: string, publicKeys: readonly KeyObject[], now: number): LicenseKeyResult {
  const result = verifyLicenseKey(text, publicKeys);
  if (result.ok && Date.parse(result.license.expires_at) <= now) return fail('expired', `the licence expired at ${result.license.expires_at}`);
  return result;
}

/** One configured public key: base64 of the DER SPKI, or a PEM with its header. Throws when it is not Ed25519. */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim().replace(/\\n/g, '\n');
  const key = trimmed.startsWith('-----BEGIN')
    ? createPublicKey({ key: trimmed, format: 'pem' })
    : createPublicKey({ key: Buffer.from(trimmed.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an Ed25519 public key, got ${key.asymmetricKeyType}`);
  return key;
}

/** Signs a payload into a license key; the issuing CLI and the tests share it. */
export function issueLicense(privateKey: string | KeyObject, payload: LicensePayload): string {
  const problem = payloadProblem(payload);
  if (problem) throw new Error(`not a valid licence: ${problem}`);
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an Ed25519 private key, got ${key.asymmetricKeyType}`);
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  return [LICENSE_KEY_PREFIX, bytes.toString('base64url'), sign(null, bytes, key).toString('base64url')].join('.');
}

interface LicenseKeyPair {
  privateKeyPem: string;
  publicKeyPem: string;
  /** The value to put in LICENSE_PUBLIC_KEYS. */
  publicKeyBase64: string;
}

export function generateLicenseKeyPair(): LicenseKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    publicKeyBase64: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}
