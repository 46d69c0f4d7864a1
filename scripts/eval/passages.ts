/**
 * Passage-level search figures on an index `npm run eval` left behind (HEARTH_EVAL_WORK): the share of questions of
 * HEARTH_EVAL_SET (dev by default) whose first five `POST /api/search` results (hybrid, one chunk per document first)
 * hold the answer span in their text, and whose first result does. Document-level figures (recall@5 of the right
 * document) come from `npm run eval` and `scripts/eval/tune.ts`; this one says whether the passage shown is the one
 * that answers (with SEARCH_SOFT_MATCH_CHUNKS as the service reads it). `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... npx tsx scripts/eval/passages.ts`
 */
import { DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService } from '../../plugins/retrieval/service.js';
import { evalWork, openEvalDatabase, openEvalVectors, withFusionOverride } from './eval-index.js';
import { containsSpan } from './metrics.js';

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const { db } = await openEvalDatabase(work);
  const { embedder, vectors } = await openEvalVectors(work);
  try {
    // Soft term matching runs as SEARCH_SOFT_MATCH_CHUNKS would have it in the service (0, the default: off).
    const softMatch = { chunks: Number(process.env.SEARCH_SOFT_MATCH_CHUNKS ?? 0) };
    const service = new RetrievalService(new RetrievalRepository(db), { embedder: () => embedder, vectors: () => vectors }, withFusionOverride(DEFAULT_FUSION), undefined, softMatch);
    let inFive = 0;
    let first = 0;
    for (const question of questions) {
      const { results } = await service.search({ query: question.question, k: 5, mode: 'hybrid', groups: ['everyone'], perDocument: 1 });
      if (results.some((result) => containsSpan(result.text, question.answer))) inFive++;
      if (results[0] && containsSpan(results[0].text, question.answer)) first++;
    }
    const share = (count: number) => (count / questions.length).toFixed(3);
    console.log(`${set}: ${questions.length} questions; the answer span is in a top-5 result's text for ${share(inFive)}, in the first result's for ${share(first)}`);
  } finally {
    await embedder.close();
    await db.destroy();
  }
}

await main();
