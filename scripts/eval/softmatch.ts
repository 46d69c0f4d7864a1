/**
 * Soft term matching (an experiment, not product), offline on an index `npm run eval` left in HEARTH_EVAL_WORK:
 * each of the question's content words meets its most similar word of a chunk (cosine of the embedder's vectors for the
 * two words alone; the same word is 1), weighed by its idf over the chunks; a document scores its best chunk. The first
 * HEARTH_SOFT_DEPTH documents of hybrid search (one chunk per document first, as `POST /api/search` ranks) are then
 * re-ranked: RRF of the hybrid rank and the soft-match rank at weight w (HEARTH_SOFT_WEIGHTS), k 30.
 * `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... npx tsx scripts/eval/softmatch.ts`
 */
import path from 'node:path';
import { loadEmbedderOnThisThread } from '../../native/embeddings/index.js';
import { DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { candidateTerms, queryWords } from '../../plugins/retrieval/keyword-query.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService } from '../../plugins/retrieval/service.js';
import { evalWork, openEvalDatabase, openEvalVectors, unitVector } from './eval-index.js';
import { rightDocuments } from './questions.js';
import { type QuestionScore, SUMMARY_HEADER, scoreRanking, summaryRow, table } from './metrics.js';

const PAGE = 1024;
const RRF_K = 30;

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const depth = Number(process.env.HEARTH_SOFT_DEPTH ?? 30);
  const weights = (process.env.HEARTH_SOFT_WEIGHTS ?? '0.5,1,2').split(',').map(Number);
  const floors = (process.env.HEARTH_SOFT_FLOORS ?? '0,0.4').split(',').map(Number);
  const { db, corpusIdOf } = await openEvalDatabase(work);
  const { embedder: serviceEmbedder, vectors } = await openEvalVectors(work);
  const embedder = (await loadEmbedderOnThisThread({ modelDir: process.env.HEARTH_EVAL_MODEL_DIR ?? path.join(work, 'data', 'models'), device: 'cpu' }))!;
  const dimension = embedder.dimension;
  const chunks = await db.selectFrom('chunks').select(['document_id', 'text']).execute();
  const byDocument = new Map<string, Array<Set<string>>>();
  const frequency = new Map<string, number>();
  for (const chunk of chunks) {
    const words = new Set(queryWords(chunk.text));
    for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1);
    let list = byDocument.get(chunk.document_id);
    if (!list) byDocument.set(chunk.document_id, (list = []));
    list.push(words);
  }
  const vocabulary = [...frequency.keys()];
  const started = performance.now();
  const vectorOf = new Map<string, Float32Array>();
  for (let i = 0; i < vocabulary.length; i += PAGE) (await embedder.embed(vocabulary.slice(i, i + PAGE))).forEach((v, j) => vectorOf.set(vocabulary[i + j], unitVector(v)));
  console.log(`${chunks.length} chunks, ${vocabulary.length} words embedded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const idf = (word: string) => Math.log(1 + chunks.length / (frequency.get(word) ?? 1));
  const cos = (a: Float32Array, b: Float32Array) => {
    let s = 0;
    for (let d = 0; d < dimension; d++) s += a[d] * b[d];
    return s;
  };

  const service = new RetrievalService(new RetrievalRepository(db), { embedder: () => serviceEmbedder, vectors: () => vectors }, { ...DEFAULT_FUSION, perDocument: 1 });
  const variants = new Map<string, QuestionScore[]>();
  const counted = { chunks: 0 };
  const push = (label: string, score: QuestionScore) => {
    if (!variants.has(label)) variants.set(label, []);
    variants.get(label)!.push(score);
  };
  try {
    for (const question of questions) {
      const right = rightDocuments(question);
      const { results } = await service.search({ query: question.question, k: depth, mode: 'hybrid', groups: ['everyone'] });
      const documents = [...new Set(results.map((result) => result.document_id))];
      const hybrid = documents.map((id) => corpusIdOf.get(id)!);
      push('hybrid', scoreRanking(question, hybrid, right));
      const terms: Array<{ word: string; vector: Float32Array; weight: number }> = [];
      for (const word of candidateTerms(question.question)) {
        let vector = vectorOf.get(word);
        if (!vector) vectorOf.set(word, (vector = unitVector((await embedder.embed([word]))[0])));
        terms.push({ word, vector, weight: idf(word) });
      }
      const rare: typeof terms = [];
      for (let rows = 0, i = 0, sorted = [...terms].filter((t) => frequency.has(t.word)).sort((a, b) => frequency.get(a.word)! - frequency.get(b.word)!); i < sorted.length && rare.length < 8; i++) {
        rows += frequency.get(sorted[i].word)!;
        if (rows > 1000) break;
        rare.push(sorted[i]);
      }
      const total = terms.reduce((sum, term) => sum + term.weight, 0) || 1;
      for (const floor of floors) {
        const soft = documents.map((id) => {
          let best = 0;
          const chunkWords = byDocument.get(id) ?? [];
          // HEARTH_SOFT_BAG=1: the document's words as one bag (a document-level variant), not chunk by chunk.
          // HEARTH_SOFT_EXACT=1: only the chunks holding at least one of the question's terms as it is.
          // HEARTH_SOFT_EXACT=rare: only those holding one of the rare terms the keyword plan ORs (df summed within 1,000 rows, 8 at most).
          const exact = process.env.HEARTH_SOFT_EXACT === 'rare' ? rare : terms;
          const scored = process.env.HEARTH_SOFT_EXACT ? chunkWords.filter((words) => exact.some((term) => words.has(term.word))) : chunkWords;
          counted.chunks += scored.length;
          for (const words of process.env.HEARTH_SOFT_BAG === '1' ? [new Set(chunkWords.flatMap((set) => [...set]))] : scored) {
            let score = 0;
            for (const term of terms) {
              let max = 0;
              if (words.has(term.word)) max = 1;
              else for (const word of words) max = Math.max(max, cos(term.vector, vectorOf.get(word)!));
              if (max >= floor) score += term.weight * max;
            }
            best = Math.max(best, score / total);
          }
          return best;
        });
        const softRank = new Map(documents.map((id, index) => ({ id, s: soft[index] })).sort((a, b) => b.s - a.s).map(({ id }, index) => [id, index + 1]));
        push(`soft alone, floor ${floor}`, scoreRanking(question, [...softRank.keys()].map((id) => corpusIdOf.get(id)!), right));
        for (const weight of weights) {
          const fused = documents
            .map((id, index) => ({ id, s: 1 / (RRF_K + index + 1) + weight / (RRF_K + softRank.get(id)!) }))
            .sort((a, b) => b.s - a.s)
            .map(({ id }) => corpusIdOf.get(id)!);
          push(`hybrid + soft × ${weight}, floor ${floor}`, scoreRanking(question, fused, right));
        }
      }
    }
    console.log(`${set}: ${questions.length} questions, depth ${depth}, ${(counted.chunks / questions.length / floors.length).toFixed(0)} chunks scored a question`);
    console.log(table(['variant', ...SUMMARY_HEADER], [...variants].map(([label, scores]) => [label, ...summaryRow(scores)])));
  } finally {
    await embedder.close();
    await serviceEmbedder.close();
    await db.destroy();
  }
}

await main();
