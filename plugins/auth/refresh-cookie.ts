import type {} from '@fastify/cookie';
import { createDecoder } from 'fast-jwt';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TokenPair } from '../sessions/index.js';

/** The browser's refresh token: HttpOnly (no page script reads it), SameSite=Strict, sent to the refresh path only. */
export const REFRESH_COOKIE = 'hearth_refresh';
export const REFRESH_COOKIE_PATH = '/api/auth/refresh';
/** A client asks for the cookie with `X-Hearth-Refresh: cookie`; without it the pair comes as JSON, as always. */
export const REFRESH_TRANSPORT_HEADER = 'x-hearth-refresh';

/** A token pair whose refresh token went into the cookie instead of the body. */
export type BrowserTokenPair = Omit<TokenPair, 'refresh_token'>;

const decode = createDecoder();

/**
 * The web UI's refresh token travels in a cookie; API clients keep the JSON contract. The route scopes
 * that use it register @fastify/cookie with `hook: false`: only the refresh route parses the header.
 */
export class RefreshCookie {
  constructor(private readonly secure: boolean) {}

  requested(request: FastifyRequest): boolean {
    return request.headers[REFRESH_TRANSPORT_HEADER] === 'cookie';
  }

  read(request: FastifyRequest): string | undefined {
    const header = request.headers.cookie;
    return header ? request.server.parseCookie(header)[REFRESH_COOKIE] || undefined : undefined;
  }

  /** The pair as this client asked for it: as JSON, or with the refresh token moved into the cookie. */
  deliver(request: FastifyRequest, reply: FastifyReply, pair: TokenPair): TokenPair | BrowserTokenPair {
    if (!this.requested(request)) return pair;
    const { refresh_token: refreshToken, ...rest } = pair;
    const { exp } = decode(refreshToken) as { exp: number };
    this.set(reply, refreshToken, Math.max(0, exp - Math.floor(Date.now() / 1000)));
    return rest;
  }

  clear(reply: FastifyReply): void {
    reply.clearCookie(REFRESH_COOKIE, this.attributes());
  }

  private set(reply: FastifyReply, value: string, maxAge: number): void {
    reply.setCookie(REFRESH_COOKIE, value, { ...this.attributes(), maxAge });
  }

  private attributes() {
    return { httpOnly: true, sameSite: 'strict', secure: this.secure, path: REFRESH_COOKIE_PATH } as const;
  }
}
