import type { Generator } from '../../native/llm/index.js';
import { candidateTerms, queryWords } from '../retrieval/index.js';

/**
 * RAG_QUERY_EXPANSION_ENABLED (off by default): with a chat model installed, the question searched is
 * the question plus a few words the model says a passage answering it might use (synonyms, related
 * terms), so that a paraphrased passage can still be found by keywords. Costs one short generation
 * per question. Whether it helps depends on the model: it was not measured (see
 * docs/embedders-and-rerankers.md).
 */
const EXPANSION_MAX_TOKENS = 48;
/** Words added at most, and their length: a runaway answer must not swamp the question. */
const TERMS_ADDED = 8;
const TERM_MAX_CHARS = 30;

const PROMPT =
  'List up to 8 other words or short phrases that a document answering this question would likely use ' +
  '(synonyms, related technical terms). Reply with the words only, separated by commas.';

/** The question with the model's extra terms, or null when the model offered none that are new. */
export async function expandQuery(query: string, generator: Generator, signal: AbortSignal): Promise<string | null> {
  const result = await generator.generate(
    [
      { role: 'system', content: PROMPT },
      { role: 'user', content: query },
    ],
    { maxTokens: EXPANSION_MAX_TOKENS, temperature: 0, signal },
  );
  const present = new Set(queryWords(query));
  const added: string[] = [];
  for (const term of candidateTerms(result.text)) {
    if (added.length >= TERMS_ADDED) break;
    if (term.length > TERM_MAX_CHARS || present.has(term)) continue;
    present.add(term);
    added.push(term);
  }
  return added.length ? `${query.trim()} ${added.join(' ')}` : null;
}
