/** The service's one error shape turned into something a page can show: a message, and the field it is about. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const FALLBACK: Record<number, string> = {
  401: 'Your session has ended. Sign in again.',
  403: 'You are not allowed to do this.',
  404: 'Not found.',
  413: 'This is larger than the service accepts.',
  429: 'Too many requests. Wait a moment and try again.',
};

/** Reads `{ error: { code, message, field } }`; any other body becomes a message from the status alone. */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  let body: { error?: { code?: unknown; message?: unknown; field?: unknown } } | undefined;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const error = body?.error;
  const fallback = FALLBACK[response.status] ?? (response.status >= 500 ? 'The service had a problem. Try again later.' : 'The request was refused.');
  let message = typeof error?.message === 'string' && error.message ? error.message : fallback;
  const retryAfter = response.headers.get('retry-after');
  if (response.status === 429 && retryAfter) message = `${message} (try again in ${retryAfter} s)`;
  return new ApiError(
    response.status,
    typeof error?.code === 'string' ? error.code : `http_${response.status}`,
    message,
    typeof error?.field === 'string' ? error.field : undefined,
  );
}

export const networkError = () => new ApiError(0, 'network_error', 'Hearth cannot be reached. Check the connection and try again.');

export const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

/** A message for any failure a page catches. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return 'Something went wrong. Try again.';
}
