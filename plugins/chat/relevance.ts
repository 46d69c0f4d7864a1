import { isTopicWord } from '../../core/text/words.js';
import { type SearchResult, queryWords } from '../retrieval/index.js';

/**
 * What counts as "found": a passage shares a content word (crudely stemmed) with the question.
 * Vector and fused scores have no absolute scale (fused ones are ranks), so the retrieval's top k
 * always holds something; passages that share no word with the question are not shown as sources,
 * and when none is left the answer says that nothing was found rather than inventing one.
 * Pure vector search (cosine scores) also keeps passages at or above MIN_COSINE.
 */
const MIN_COSINE = 0.5;

const stem = (word: string) => {
  const base = word.replace(/(ies|es|s|ing|ed|ly)$/, '');
  return (base.length >= 3 ? base : word).slice(0, 6);
};

function contentStems(text: string): Set<string> {
  return new Set(queryWords(text).filter(isTopicWord).map(stem));
}

export function relevantResults(results: SearchResult[], query: string, score: string): SearchResult[] {
  const wanted = contentStems(query);
  // A question of function words only gives nothing to compare: retrieval's ranking stands.
  if (!wanted.size) return results;
  return results.filter((result) => {
    if (score === 'cosine' && result.score >= MIN_COSINE) return true;
    const found = contentStems(`${result.filename} ${result.heading ?? ''} ${result.text}`);
    for (const term of wanted) if (found.has(term)) return true;
    return false;
  });
}
