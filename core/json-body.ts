import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from './errors.js';

type Done = (error: Error | null, body?: unknown) => void;

const forbiddenKey = () =>
  badRequest('forbidden_json_key', 'The request body is valid JSON, but a key named "__proto__" or "constructor.prototype" is not accepted', 'body');

/** Whether the text parses as JSON (with the byte order mark Fastify's parser skips). */
function parses(text: string): boolean {
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fastify's own JSON parser (secure-json-parse, refusing prototype keys as the app is configured to), whose refusals
 * all read "not valid JSON": one of a body that does parse was a forbidden key, and says so (400 forbidden_json_key).
 */
export function replaceJsonParser(app: FastifyInstance): void {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning) as (request: FastifyRequest, body: string, done: Done) => void;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done: Done) => {
    parse(request, body as string, (error, value) => (error && parses(body as string) ? done(forbiddenKey()) : done(error, value)));
  });
}
