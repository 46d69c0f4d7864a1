import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pinnedRequest } from '../../core/net/guarded-request.js';
import { checkUrl, type Network, type NetworkPolicy, systemNetwork } from '../../core/net/ssrf-guard.js';

/**
 * GET with the SSRF guard applied to every hop: redirects are followed here (never by the HTTP
 * client), each Location is checked again, and each connection goes to the address that was checked.
 */

const REQUEST_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 20 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface FetchOptions {
  policy: NetworkPolicy;
  /** Sent on every hop (user agent, accept). */
  headers: Record<string, string>;
  /** Sent only on the first hop: If-None-Match / If-Modified-Since belong to the URL asked for. */
  conditional?: Record<string, string>;
  /** Sent only while the hop stays on this origin: credentials never follow a redirect elsewhere. */
  credentials?: { origin: string; headers: Record<string, string> };
  /** Follow redirects only within the first URL's origin; a hop elsewhere is reported, not requested. */
  sameOriginOnly?: boolean;
  /** Where a 2xx body is written. */
  saveTo: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
  network?: Network;
}

export type FetchResult =
  | { kind: 'ok'; url: URL; headers: IncomingHttpHeaders; file: string; size: number; sha256: string }
  | { kind: 'not_modified'; url: URL; headers: IncomingHttpHeaders }
  | { kind: 'too_large'; url: URL }
  | { kind: 'off_origin'; url: URL }
  | { kind: 'status'; url: URL; status: number };

/** A network failure, a timeout or a redirect loop: the page could not be read this time. */
export class FetchError extends Error {
  name = 'FetchError';
}

class TooLarge extends Error {}

async function saveBody(response: IncomingMessage, file: string, maxBytes: number): Promise<{ size: number; sha256: string } | null> {
  if (Number(response.headers['content-length'] ?? 0) > maxBytes) {
    response.destroy();
    return null;
  }
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new TooLarge());
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(response, meter, createWriteStream(file, { mode: 0o600 }));
    return { size, sha256: hash.digest('hex') };
  } catch (error) {
    await rm(file, { force: true });
    if (error instanceof TooLarge) return null;
    throw error;
  }
}

const describe = (error: unknown): string => {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timed out or was stopped';
  return error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
};

export async function guardedFetch(start: URL, options: FetchOptions): Promise<FetchResult> {
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  let url = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    // The guard judges every Location first, so a refused target is reported as such even off the origin.
    const network = options.network ?? systemNetwork;
    const checked = await checkUrl(url, options.policy, network.resolve);
    if (options.sameOriginOnly && url.origin !== start.origin) return { kind: 'off_origin', url };
    const headers = {
      ...options.headers,
      ...(hop === 0 ? options.conditional : {}),
      ...(options.credentials && url.origin === options.credentials.origin ? options.credentials.headers : {}),
    };
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    let response: IncomingMessage;
    try {
      response = await pinnedRequest(url, checked, network, { method: 'GET', headers, signal });
    } catch (error) {
      throw new FetchError(`${url.origin}${url.pathname}: ${describe(error)}`);
    }
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECT_STATUSES.has(status) && location) {
      response.resume();
      try {
        url = new URL(location, url);
      } catch {
        throw new FetchError(`${url.origin}${url.pathname}: redirects to a malformed Location`);
      }
      continue;
    }
    if (status === 304) {
      response.resume();
      return { kind: 'not_modified', url, headers: response.headers };
    }
    if (status < 200 || status >= 300 || status === 204) {
      response.resume();
      return { kind: 'status', url, status };
    }
    let body: Awaited<ReturnType<typeof saveBody>>;
    try {
      body = await saveBody(response, options.saveTo, options.maxBytes ?? MAX_RESPONSE_BYTES);
    } catch (error) {
      throw new FetchError(`${url.origin}${url.pathname}: ${describe(error)}`);
    }
    return body ? { kind: 'ok', url, headers: response.headers, file: options.saveTo, ...body } : { kind: 'too_large', url };
  }
  throw new FetchError(`${start.origin}${start.pathname}: more than ${MAX_REDIRECTS} redirects`);
}
