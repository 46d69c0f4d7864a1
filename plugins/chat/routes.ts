import sseModule, { type SSEPluginOptions, type SSEReplyInterface } from '@fastify/sse';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../../core/auth/guard.js';
import { HttpError } from '../../core/errors.js';
import { GenerationTimeoutError, GeneratorBusyError, UpstreamError } from '../../native/llm/index.js';
import { ChatBody, ChatResponse } from './schemas.js';
import { ChatCancelled, type OpenChat } from './service.js';

/** The package's CommonJS export is the fastify-plugin-wrapped function (its named exports are not wrapped); its types describe only the named ones. */
const sse = sseModule as unknown as FastifyPluginAsync<SSEPluginOptions>;

/** Heartbeat comments keep proxies from closing the connection while the model thinks. */
const HEARTBEAT_MS = 15_000;

const retryAfter = (seconds: number) => ({ 'retry-after': String(Math.max(1, Math.ceil(seconds))) });

/** The model's failures as the one error shape: busy 503, timeout 504, upstream 502 (Retry-After passed on from a 429). */
function generationError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error instanceof GeneratorBusyError) return new HttpError(503, 'model_busy', error.message, undefined, retryAfter(error.retryAfterSeconds));
  if (error instanceof GenerationTimeoutError) return new HttpError(504, 'generation_timeout', error.message);
  if (error instanceof UpstreamError) {
    const code = error.status === 429 ? 'upstream_rate_limited' : 'upstream_error';
    return new HttpError(502, code, error.message, undefined, error.retryAfterSeconds !== undefined ? retryAfter(error.retryAfterSeconds) : {});
  }
  return undefined;
}

/** Aborts when the client's connection closes before the answer was written (a disconnect, not the normal end). */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

export const chatRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(sse, { heartbeatInterval: HEARTBEAT_MS });

  app.post('/api/chat', {
    sse: 'dual',
    config: { access: { role: 'viewer' } },
    schema: {
      summary: 'Ask a question about the documents',
      description:
        'JSON by default. With `Accept: text/event-stream` the answer streams as `delta` { text } events, then one `done` event with the metadata ' +
        '(everything of the JSON answer but `answer`), or one `error` { detail, code } event; the stream then closes. ' +
        'Markers [n] in the answer point at sources[n-1]. Without a chat model the answer quotes the best passages (mode extractive). ' +
        "An unknown conversation_id, or someone else's, is a 404 before anything streams.",
      tags: ['chat'],
      body: ChatBody,
      response: { 200: ChatResponse },
    },
  }, async (request, reply) => {
    const { id } = principalOf(request);
    const chat = await app.chat.open(id, await app.groups.readerGroups(id), request.body);
    const audited = (conversationId: string) =>
      app.audit.record(request, { event: 'chat.query', target: conversationId, details: app.audit.queryDetails(request.body.query) });
    const signal = disconnectSignal(reply);
    const stream = (reply as { sse?: SSEReplyInterface }).sse;
    if (stream) return streamAnswer(request, reply, stream, chat, signal, audited);
    try {
      const answered = await app.chat.answer(chat, { onDelta: () => undefined, signal, log: request.log });
      await audited(answered.conversation_id);
      return answered;
    } catch (error) {
      if (error instanceof ChatCancelled) {
        request.log.info({ event: 'chat.cancelled' }, 'client went away; nothing stored');
        return reply.hijack();
      }
      throw generationError(error) ?? error;
    }
  });

  async function streamAnswer(
    request: FastifyRequest, reply: FastifyReply, stream: SSEReplyInterface, chat: OpenChat, signal: AbortSignal, audited: (conversationId: string) => Promise<void>,
  ): Promise<void> {
    let started = false;
    let writes = Promise.resolve();
    // onDelta is synchronous (tokens arrive from the model): writes are chained to keep their order.
    const send = (event: string, data: object) => {
      started = true;
      writes = writes.then(() => (stream.isConnected ? stream.send({ event, data }) : undefined)).catch(() => undefined);
      return writes;
    };
    try {
      const { answer: _answer, ...done } = await app.chat.answer(chat, { onDelta: (text) => void send('delta', { text }), signal, log: request.log });
      await send('done', done);
      await audited(done.conversation_id);
    } catch (error) {
      if (error instanceof ChatCancelled) return void request.log.info({ event: 'chat.cancelled' }, 'client went away; nothing stored');
      const known = generationError(error);
      if (!known || known.statusCode >= 500) request.log.error({ err: error }, 'chat stream failed');
      if (!started && known?.headers['retry-after']) reply.header('retry-after', known.headers['retry-after']);
      const retry = known?.headers['retry-after'];
      await send('error', {
        detail: known?.message ?? 'Internal server error',
        code: known?.code ?? 'internal_error',
        ...(retry ? { retry_after: Number(retry) } : {}),
      });
    }
    await writes;
  }
};
