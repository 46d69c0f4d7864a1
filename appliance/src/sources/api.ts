import { authorizedFetch } from '../api/client';
import { errorFromResponse } from '../api/errors';

/** GET /api/docs/{id}/file: the stored original, with its type. */
export async function fetchDocumentFile(documentId: string, signal?: AbortSignal): Promise<{ type: string; blob: Blob }> {
  const response = await authorizedFetch(`/api/docs/${encodeURIComponent(documentId)}/file`, { signal });
  if (!response.ok) throw await errorFromResponse(response);
  return { type: (response.headers.get('content-type') ?? '').split(';')[0].trim(), blob: await response.blob() };
}

/** Saves a blob under the given name through a temporary object URL (the name is only the download's name). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
