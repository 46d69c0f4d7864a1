import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrl, type Network, type NetworkPolicy, type ResolvedAddress } from './ssrf-guard.js';

/**
 * One HTTP exchange with the SSRF guard applied: the caller checks the URL (checkUrl) and the request
 * goes to the address that passed, so a second DNS answer cannot send it elsewhere. Redirects are
 * never followed here: a caller that follows one checks its Location like any other URL.
 */

interface PinnedRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  signal: AbortSignal;
}

/** Hands the HTTP client the address the guard already checked. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as LookupFunction;
}

/** Sends one request to the checked address and resolves with the response head (the body still to read). */
export function pinnedRequest(url: URL, checked: ResolvedAddress, network: Network, init: PinnedRequestInit): Promise<IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const target = network.dial(checked);
    const headers = init.body === undefined ? init.headers : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
    const request = client.request(url, { method: init.method, headers, signal: init.signal, agent: false, lookup: pinnedLookup(target) }, resolve);
    request.on('error', reject);
    request.end(init.body);
  });
}

/** The response body, refused beyond maxBytes. */
async function readCapped(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.destroy();
      throw new Error(`the response is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The subset of fetch()'s init that clients taking a custom fetch send (openid-client, oauth4webapi). */
interface FetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams | ArrayBuffer | Uint8Array | ReadableStream | null;
  signal?: AbortSignal | null;
}

async function bodyOf(body: FetchInit['body']): Promise<string | Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ReadableStream) return Buffer.from(await new Response(body).arrayBuffer());
  return Buffer.from(body instanceof ArrayBuffer ? new Uint8Array(body) : body);
}

const BODYLESS_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch() for libraries that accept one: every call goes through the guard under the policy, a
 * redirect comes back as the 3xx it is (never followed), and the body is capped (IdP documents are small).
 */
export function guardedFetchFunction(policy: NetworkPolicy, network: Network, maxBytes = 1024 * 1024) {
  return async (resource: string, init: FetchInit = {}): Promise<Response> => {
    const url = new URL(resource);
    const checked = await checkUrl(url, policy, network.resolve);
    const response = await pinnedRequest(url, checked, network, {
      method: init.method ?? 'GET',
      headers: init.headers ?? {},
      body: await bodyOf(init.body),
      signal: init.signal ?? AbortSignal.timeout(30_000),
    });
    const status = response.statusCode ?? 0;
    const content = await readCapped(response, maxBytes);
    const headers = new Headers();
    for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) headers.append(response.rawHeaders[i], response.rawHeaders[i + 1]);
    return new Response(BODYLESS_STATUSES.has(status) ? null : new Uint8Array(content), { status, statusText: response.statusMessage, headers });
  };
}
