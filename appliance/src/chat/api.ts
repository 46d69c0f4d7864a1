import { createParser } from 'eventsource-parser';
import { api, authorizedFetch } from '../api/client';
import { ApiError, errorFromResponse } from '../api/errors';
import type { ChatMetadata, Conversation, ConversationSummary } from '../api/types';

export const listConversations = () => api<{ conversations: ConversationSummary[]; total: number }>('/api/conversations', { query: { limit: 50 } });

export const getConversation = (id: string) => api<Conversation>(`/api/conversations/${encodeURIComponent(id)}`);

export interface StreamHandlers {
  onDelta: (text: string) => void;
}

/**
 * POST /api/chat as a Server-Sent Events stream, read with fetch so the Authorization header goes with it
 * (EventSource cannot send one). Resolves with the `done` event's metadata; an `error` event rejects with its
 * message; aborting the signal stops the answer (the service then stores nothing).
 */
export async function streamChat(body: { query: string; conversation_id?: string }, { onDelta }: StreamHandlers, signal: AbortSignal): Promise<ChatMetadata> {
  const response = await authorizedFetch('/api/chat', {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok || !response.body) throw await errorFromResponse(response);

  let done: ChatMetadata | undefined;
  let failure: ApiError | undefined;
  const parser = createParser({
    onEvent(event) {
      const data = JSON.parse(event.data) as Record<string, unknown>;
      if (event.event === 'delta') onDelta(String(data.text ?? ''));
      else if (event.event === 'done') done = data as unknown as ChatMetadata;
      else if (event.event === 'error') failure = new ApiError(200, String(data.code ?? 'stream_error'), String(data.detail ?? 'The answer failed.'));
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    parser.feed(value);
  }
  if (failure) throw failure;
  if (!done) throw new ApiError(0, 'stream_cut', 'The answer stopped before it was complete.');
  return done;
}
