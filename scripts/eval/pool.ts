/**
 * How deep the right document sits in each list (an experiment, not product): for each question of HEARTH_EVAL_SET
 * the rank of its first right document among the first 50 documents of keyword, vector and hybrid search (one chunk per
 * document first), and the share of questions whose right document some list holds within depth d: the ceiling of any
 * re-ranking of those candidates. Per question ranks go to HEARTH_POOL_OUT (JSON lines) when set.
 * `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... npx tsx scripts/eval/pool.ts`
 */
import { writeFile } from 'node:fs/promises';
import { DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode } from '../../plugins/retrieval/service.js';
import { evalWork, openEvalDatabase, openEvalVectors } from './eval-index.js';
import { rightDocuments } from './questions.js';
import { mean, table } from './metrics.js';

const MODES: SearchMode[] = ['keyword', 'vector', 'hybrid'];
const DEPTHS = [5, 10, 20, 50];

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const { db, corpusIdOf } = await openEvalDatabase(work);
  const { embedder, vectors } = await openEvalVectors(work);
  const service = new RetrievalService(new RetrievalRepository(db), { embedder: () => embedder, vectors: () => vectors }, { ...DEFAULT_FUSION, perDocument: 1 });
  const ranks: Array<{ id: string; kind: string; rank: Record<string, number> }> = [];
  try {
    for (const question of questions) {
      const right = rightDocuments(question);
      const row = { id: question.id, kind: question.kind, rank: {} as Record<string, number> };
      for (const mode of MODES) {
        const { results } = await service.search({ query: question.question, k: 50, mode, groups: ['everyone'] });
        const documents = [...new Set(results.map((result) => corpusIdOf.get(result.document_id)!))];
        const rank = documents.findIndex((doc) => right.has(doc)) + 1;
        row.rank[mode] = rank > 0 ? rank : Infinity;
      }
      ranks.push(row);
    }
    const rows: Array<Array<string | number>> = [];
    for (const kind of ['all', 'same', 'paraphrased']) {
      const of = ranks.filter((r) => kind === 'all' || r.kind === kind);
      for (const depth of DEPTHS) {
        const within = (mode: SearchMode) => mean(of.map((r) => (r.rank[mode] <= depth ? 1 : 0)));
        const union = mean(of.map((r) => (MODES.some((mode) => r.rank[mode] <= depth) ? 1 : 0)));
        rows.push([`${kind} @${depth}`, ...MODES.map(within), union]);
      }
    }
    console.log(`${set}: ${questions.length} questions`);
    console.log(table(['questions', ...MODES, 'union'], rows));
    if (process.env.HEARTH_POOL_OUT) await writeFile(process.env.HEARTH_POOL_OUT, ranks.map((r) => JSON.stringify(r)).join('\n') + '\n');
  } finally {
    await embedder.close();
    await db.destroy();
  }
}

await main();
