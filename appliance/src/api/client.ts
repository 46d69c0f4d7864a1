import { ApiError, errorFromResponse, isAbort, networkError } from './errors';

/**
 * The one fetch client. The access token lives in this module's memory only; the refresh token is an
 * HttpOnly cookie (scoped to /api/auth/refresh) that no script can read. On a 401 the client refreshes
 * once through the cookie and retries; when that fails the session is over and listeners are told.
 */

/** Asks the service to put the refresh token in the cookie rather than in the JSON body. */
export const REFRESH_COOKIE_HEADER = { 'X-Hearth-Refresh': 'cookie' } as const;

let accessToken: string | null = null;
let refreshing: Promise<boolean> | null = null;
const endedListeners = new Set<() => void>();

export const tokens = {
  set(token: string) {
    accessToken = token;
  },
  clear() {
    accessToken = null;
  },
  present: () => accessToken !== null,
  /** Called when a refresh fails: the session ended elsewhere (revoked, expired, signed out in another tab). */
  onSessionEnded(listener: () => void): () => void {
    endedListeners.add(listener);
    return () => endedListeners.delete(listener);
  },
};

function withToken(init: RequestInit): RequestInit {
  const headers = new Headers(init.headers);
  if (accessToken) headers.set('authorization', `Bearer ${accessToken}`);
  return { ...init, headers, credentials: 'same-origin' };
}

/** Tabs share the cookie: one refresh at a time across them, or two would spend the same refresh token. */
function acrossTabs<T>(work: () => Promise<T>): Promise<T> {
  return navigator.locks ? (navigator.locks.request('hearth-refresh', work) as Promise<T>) : work();
}

/** Exchanges the refresh cookie for a new access token (and a rotated cookie); false when there is no session. */
export function refreshSession(): Promise<boolean> {
  refreshing ??= acrossTabs(async () => {
    try {
      const response = await fetch('/api/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...REFRESH_COOKIE_HEADER },
        body: '{}',
        credentials: 'same-origin',
      });
      if (!response.ok) {
        accessToken = null;
        return false;
      }
      accessToken = ((await response.json()) as { access_token: string }).access_token;
      return true;
    } catch {
      return false;
    }
  }).finally(() => (refreshing = null));
  return refreshing;
}

/** fetch with the access token; on a 401, one refresh through the cookie and one retry. */
export async function authorizedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const hadToken = accessToken !== null;
  let response: Response;
  try {
    response = await fetch(url, withToken(init));
  } catch (error) {
    throw isAbort(error) ? error : networkError();
  }
  if (response.status !== 401 || !hadToken) return response;
  if (!(await refreshSession())) {
    for (const listener of endedListeners) listener();
    return response;
  }
  try {
    return await fetch(url, withToken(init));
  } catch (error) {
    throw isAbort(error) ? error : networkError();
  }
}

export interface ApiOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export function withQuery(path: string, query: ApiOptions['query'] = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** A JSON call: the parsed body, or an ApiError carrying the service's message. */
export async function api<T>(path: string, { method = 'GET', body, query, headers = {}, signal }: ApiOptions = {}): Promise<T> {
  const init: RequestInit = { method, signal, headers: { accept: 'application/json', ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await authorizedFetch(withQuery(path, query), init);
  if (!response.ok) throw await errorFromResponse(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** One XMLHttpRequest upload (fetch reports no upload progress), with the token and the same single refresh and retry. */
function sendUpload(url: string, form: FormData, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<{ status: number; body: string; retryAfter: string | null }> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    if (accessToken) request.setRequestHeader('authorization', `Bearer ${accessToken}`);
    request.setRequestHeader('accept', 'application/json');
    request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
    request.onload = () => resolve({ status: request.status, body: request.responseText, retryAfter: request.getResponseHeader('retry-after') });
    request.onerror = () => reject(networkError());
    request.onabort = () => reject(new DOMException('Upload cancelled', 'AbortError'));
    signal?.addEventListener('abort', () => request.abort(), { once: true });
    request.send(form);
  });
}

/** A multipart upload with progress; resolves with the parsed JSON answer or rejects with an ApiError. */
export async function upload<T>(url: string, form: FormData, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<T> {
  let result = await sendUpload(url, form, onProgress, signal);
  if (result.status === 401 && accessToken && (await refreshSession())) result = await sendUpload(url, form, onProgress, signal);
  const response = new Response(result.body || null, {
    status: result.status,
    headers: { 'content-type': 'application/json', ...(result.retryAfter ? { 'retry-after': result.retryAfter } : {}) },
  });
  if (!response.ok) throw await errorFromResponse(response);
  return (await response.json()) as T;
}

export { ApiError };
