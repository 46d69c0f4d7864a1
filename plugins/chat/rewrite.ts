import type { Generator } from '../../native/llm/index.js';
import type { PastTurn } from '../conversations/index.js';
import { candidateTerms, queryWords } from '../retrieval/index.js';
import { normalise } from './classifier.js';

/**
 * RAG_QUERY_REWRITE_ENABLED: a follow-up ("and the second one?") is searched as a standalone
 * query built from the last RAG_QUERY_REWRITE_MAX_TURNS turns: by the model when there is one,
 * else by adding the previous questions' key terms.
 */
export interface Rewrite {
  /** What retrieval searches. */
  query: string;
  /** The rewritten query, or null when the question was searched as asked. */
  rewritten: string | null;
  by: 'model' | 'terms' | null;
}

const FOLLOW_UP_START = /^(and|but|also|so|then|what about|how about|what of|same for|what else|or)\b/;
const REFERRING_WORD = /\b(it|its|they|them|their|that|this|those|these|he|she|him|his|her|one|ones|former|latter|same|above|previous)\b/;
const SHORT_QUERY_WORDS = 4;
const TERMS_ADDED = 6;
const REWRITE_MAX_TOKENS = 96;
const REWRITE_MAX_CHARS = 500;
/** Past answers are shown to the model only this far: the question is what matters. */
const ANSWER_EXCERPT_CHARS = 300;

export function isFollowUp(query: string): boolean {
  const text = normalise(query);
  return FOLLOW_UP_START.test(text) || REFERRING_WORD.test(text) || text.split(' ').length <= SHORT_QUERY_WORDS;
}

/** The query to search; `turns` are the conversation's last turns, oldest first. */
export async function rewriteQuery(query: string, turns: PastTurn[], generator: Generator | null, signal: AbortSignal): Promise<Rewrite> {
  if (!turns.length || !isFollowUp(query)) return { query, rewritten: null, by: null };
  if (generator) {
    const rewritten = await rewriteWithModel(query, turns, generator, signal);
    if (rewritten) return { query: rewritten, rewritten, by: 'model' };
  }
  const rewritten = withPreviousTerms(query, turns);
  return rewritten === query ? { query, rewritten: null, by: null } : { query: rewritten, rewritten, by: 'terms' };
}

/** The query plus the key terms of the previous questions, newest first, that it does not already contain. */
export function withPreviousTerms(query: string, turns: PastTurn[]): string {
  const present = new Set(queryWords(query));
  const added: string[] = [];
  for (const turn of [...turns].reverse()) {
    for (const term of candidateTerms(turn.query)) {
      if (added.length >= TERMS_ADDED) break;
      if (!present.has(term)) {
        present.add(term);
        added.push(term);
      }
    }
  }
  return added.length ? `${query.trim()} ${added.join(' ')}` : query;
}

async function rewriteWithModel(query: string, turns: PastTurn[], generator: Generator, signal: AbortSignal): Promise<string | null> {
  const conversation = turns.map((turn) => `User: ${turn.query}\nAssistant: ${turn.answer.slice(0, ANSWER_EXCERPT_CHARS)}`).join('\n');
  const result = await generator.generate(
    [
      {
        role: 'system',
        content: "Rewrite the user's follow-up as one standalone question that can be understood without the conversation. Keep names, numbers and terms. Reply with the question only.",
      },
      { role: 'user', content: `Conversation:\n${conversation}\n\nFollow-up: ${query}\nStandalone question:` },
    ],
    { maxTokens: REWRITE_MAX_TOKENS, temperature: 0, signal },
  );
  const line = result.text.trim().split('\n')[0]?.replace(/^(standalone question:)\s*/i, '').replace(/^["“]|["”]$/g, '').trim() ?? '';
  if (!line || line.length > REWRITE_MAX_CHARS) return null;
  // A rewrite that shares no word with the conversation is not a rewrite of it (a story model, a refusal).
  const known = new Set([query, ...turns.map((turn) => turn.query)].flatMap(candidateTerms));
  return queryWords(line).some((word) => known.has(word)) ? line : null;
}
