import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier, TokenError } from 'fast-jwt';
import { BoundedMap } from '../bounded-map.js';
import { clock } from '../clock.js';
import type { JwtAlgorithm } from '../config.js';
import { unauthorized } from '../errors.js';

type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  sub: string;
  /** The login session this token belongs to (refresh rotation and revocation). */
  sid: string;
  typ: TokenType;
  jti: string;
  /** Issue time in milliseconds: revocation watermarks need finer grain than `iat`'s seconds. */
  iat_ms: number;
  iat: number;
  exp: number;
}

/** Verified tokens kept, each until it expires: a bearer token is presented on every request. */
const VERIFIED_CACHE_SIZE = 1000;

/** Signs and verifies Hearth's JWTs; the verifier accepts only the configured algorithm. */
export class TokenService {
  private readonly sign: (payload: Record<string, unknown>) => string;
  private readonly verify: (token: string) => TokenClaims;
  /**
   * Keyed by the whole token string, so only the very same token hits. fast-jwt's own cache keys
   * by a fresh SHA-256 of the token (more than the rest of an authenticated read) and warns at
   * boot about any other key.
   */
  private readonly verified = new BoundedMap<string, TokenClaims>(VERIFIED_CACHE_SIZE);

  constructor(secret: string, algorithm: JwtAlgorithm) {
    this.sign = createSigner({ key: secret, algorithm });
    this.verify = createVerifier({
      key: secret,
      algorithms: [algorithm],
      requiredClaims: ['sub', 'sid', 'typ', 'jti', 'iat_ms', 'exp'],
    });
  }

  issue(type: TokenType, userId: string, sessionId: string, lifetimeSeconds: number, jti: string = randomUUID()): string {
    const now = clock.now();
    return this.sign({
      sub: userId,
      sid: sessionId,
      typ: type,
      jti,
      iat_ms: now,
      exp: Math.floor(now / 1000) + lifetimeSeconds,
    });
  }

  /** Throws 401 for anything but a valid, unexpired token of the expected type. */
  check(token: string, expected: TokenType): TokenClaims {
    let claims = this.verified.get(token);
    if (!claims || claims.exp * 1000 <= Date.now()) {
      try {
        claims = this.verify(token);
      } catch (error) {
        this.verified.delete(token);
        const expired = error instanceof TokenError && error.code === TokenError.codes.expired;
        throw unauthorized(expired ? 'Token expired' : 'Invalid token');
      }
      this.verified.set(token, claims);
    }
    if (claims.typ !== expected) throw unauthorized(`A ${claims.typ} token cannot be used as a ${expected} token`);
    if (typeof claims.iat_ms !== 'number' || typeof claims.sub !== 'string') throw unauthorized('Invalid token');
    return claims;
  }
}
