import { badRequest } from '../../core/errors.js';
import type { ChatMessage, Generator } from '../../native/llm/index.js';
import type { PastTurn, SourceView } from '../conversations/index.js';
import { buildMessages, sourceBlock } from './prompt.js';

/** The figures of one prompt's fit into the context window (the `token_budget` of the answer). */
export interface TokenBudget {
  limit: number;
  estimated_prompt: number;
  reserved_completion: number;
  chunks_dropped: number;
  turns_dropped: number;
}

interface FittedPrompt {
  messages: ChatMessage[];
  /** The sources kept, best first: their markers are unchanged (the lowest-relevance ones go first). */
  sources: SourceView[];
  budget: TokenBudget;
  /** Whether anything was dropped or the completion reserve shrunk: token_budget is null otherwise. */
  trimmed: boolean;
}

const MAX_COMPLETION = 512;
const MIN_COMPLETION = 16;
/** Tokens a piece's own count may miss (role headers, separators): drops closer than this to the fit are recounted one by one. */
const ESTIMATE_MARGIN = 16;

/** Tokens kept free for the answer: a quarter of the window, between 16 and 512. */
export function reservedCompletion(limit: number): number {
  return Math.max(MIN_COMPLETION, Math.min(MAX_COMPLETION, Math.floor(limit / 4)));
}

type Counter = Pick<Generator, 'countPromptTokens' | 'countTokens'>;

/**
 * Fits system + history + numbered sources + question into `limit` tokens less the completion
 * reserve, counted by the model's own tokenizer and chat template. Drops, in this order: the
 * lowest-relevance sources but the best, the oldest turns, the best source. Pieces are dropped by
 * their estimated size and the whole prompt is counted again, so a long trim costs a few counts
 * rather than one per piece.
 */
export function fitPrompt(counter: Counter, limit: number, history: PastTurn[], sources: SourceView[], query: string): FittedPrompt {
  let keptSources = sources.length;
  let firstTurn = 0;
  const drops: { apply: () => void; tokens: () => number }[] = [
    ...sources.slice(1).reverse().map((source) => ({ apply: () => void keptSources--, tokens: () => counter.countTokens(sourceBlock(source)) })),
    ...history.map((turn) => ({ apply: () => void firstTurn++, tokens: () => counter.countTokens(turn.query) + counter.countTokens(turn.answer) })),
    ...sources.slice(0, 1).map((source) => ({ apply: () => void keptSources--, tokens: () => counter.countTokens(sourceBlock(source)) })),
  ];
  const build = () => buildMessages(history.slice(firstTurn), sources.slice(0, keptSources), query);

  let reserved = reservedCompletion(limit);
  let messages = build();
  let count = counter.countPromptTokens(messages);
  let next = 0;
  while (count > limit - reserved && next < drops.length) {
    let excess = count - (limit - reserved);
    // Estimates leave out the template's tokens per message: near the fit, a recount decides instead.
    do {
      const drop = drops[next++];
      excess -= drop.tokens();
      drop.apply();
    } while (excess > ESTIMATE_MARGIN && next < drops.length);
    messages = build();
    count = counter.countPromptTokens(messages);
  }
  let shrunk = false;
  if (count > limit - reserved) {
    if (limit - count < MIN_COMPLETION) {
      throw badRequest('query_too_long', `The question does not fit the model's context window of ${limit} tokens (EFFECTIVE_N_CTX): ask a shorter one, or raise N_CTX`, 'body.query');
    }
    reserved = limit - count;
    shrunk = true;
  }
  const chunksDropped = sources.length - keptSources;
  return {
    messages,
    sources: sources.slice(0, keptSources),
    budget: { limit, estimated_prompt: count, reserved_completion: reserved, chunks_dropped: chunksDropped, turns_dropped: firstTurn },
    trimmed: shrunk || chunksDropped > 0 || firstTurn > 0,
  };
}
