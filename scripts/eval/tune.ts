/**
 * Tuning on an index `npm run eval` left behind (HEARTH_EVAL_WORK): the fusion settings below, compared
 * in-process through the real RetrievalService over that data dir's SQLite file, vector index and model,
 * on one half of the questions (HEARTH_EVAL_SET, default dev: choices are made there, then reported on test).
 * `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... npx tsx scripts/eval/tune.ts`
 */
import { DEFAULT_FUSION, type FusionSettings } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode } from '../../plugins/retrieval/service.js';
import { evalWork, openEvalDatabase, openEvalVectors, searchScores, withFusionOverride } from './eval-index.js';
import { printSummary, summaryRow } from './metrics.js';

interface Variant {
  label: string;
  mode: SearchMode;
  fusion?: Partial<FusionSettings>;
}

/** RRF k is 60 in a variant whose label names no other (the default before session 13; DEFAULT_FUSION's is 30). */
const rrf = (keyword: number, vector: number, rrfK = 60, document = DEFAULT_FUSION.weights.document, soft = DEFAULT_FUSION.weights.soft): Partial<FusionSettings> => ({ method: 'rrf', rrfK, weights: { keyword, vector, document, soft } });

const VARIANTS: Variant[] = [
  { label: 'keyword', mode: 'keyword' },
  { label: 'vector', mode: 'vector' },
  { label: 'hybrid (default)', mode: 'hybrid' },
  { label: 'hybrid rrf equal weights', mode: 'hybrid', fusion: rrf(1, 1) },
  ...[1.5, 2, 3].map((w): Variant => ({ label: `hybrid rrf kw×${w}`, mode: 'hybrid', fusion: rrf(w, 1) })),
  ...[10, 30].map((k): Variant => ({ label: `hybrid rrf k=${k} kw×2`, mode: 'hybrid', fusion: rrf(2, 1, k) })),
  ...[0.5, 0.6, 0.7, 0.8].map((w): Variant => ({ label: `hybrid weighted kw ${w}`, mode: 'hybrid', fusion: { method: 'weighted', weights: { keyword: w, vector: 1 - w, document: DEFAULT_FUSION.weights.document, soft: DEFAULT_FUSION.weights.soft } } })),
  ...[1, 2, 3].map((n): Variant => ({ label: `keyword perDoc ${n}`, mode: 'keyword', fusion: { perDocument: n } })),
  ...[1, 2, 3].map((n): Variant => ({ label: `hybrid equal weights perDoc ${n}`, mode: 'hybrid', fusion: { ...rrf(1, 1), perDocument: n } })),
  ...[1, 2].map((n): Variant => ({ label: `hybrid kw×2 perDoc ${n}`, mode: 'hybrid', fusion: { ...rrf(2, 1), perDocument: n } })),
  // The whole-document keyword ranking's weight (0: chunk lists alone), with one chunk per document first as POST /api/search ranks.
  ...[0, 1, 2, 3, 4, 6].map((w): Variant => ({ label: `hybrid kw×2 doc×${w} perDoc 1`, mode: 'hybrid', fusion: { ...rrf(2, 1, 60, w), perDocument: 1 } })),
  ...[10, 20, 30, 40].flatMap((k) => [2, 4].map((w): Variant => ({ label: `hybrid k=${k} kw×2 doc×${w} perDoc 1`, mode: 'hybrid', fusion: { ...rrf(2, 1, k, w), perDocument: 1 } }))),
  // HEARTH_EVAL_GRID="keyword,vector,k,document[,soft];…": RRF settings of one's own, one chunk per document first.
  ...(process.env.HEARTH_EVAL_GRID ?? '')
    .split(';')
    .filter(Boolean)
    .map((cell): Variant => {
      const [keyword, vector, k, document, soft] = cell.split(',').map(Number);
      const label = `grid kw×${keyword} vec×${vector} k=${k} doc×${document}${soft === undefined ? '' : ` soft×${soft}`}`;
      return { label, mode: 'hybrid', fusion: { ...rrf(keyword, vector, k, document, soft), perDocument: 1 } };
    }),
];

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const only = process.env.HEARTH_EVAL_VARIANTS?.split(',');
  const k = Number(process.env.HEARTH_EVAL_K ?? 10);
  const { db, score } = await openEvalDatabase(work);
  const { embedder, vectors } = await openEvalVectors(work);
  const sources = { embedder: () => embedder, vectors: () => vectors };
  // Soft term matching runs as SEARCH_SOFT_MATCH_CHUNKS would have it in the service (0, the default: off).
  const softMatch = { chunks: Number(process.env.SEARCH_SOFT_MATCH_CHUNKS ?? 0) };
  const rows: Array<Array<string | number>> = [];
  try {
    for (const variant of VARIANTS.filter((v) => !only || only.includes(v.label))) {
      const service = new RetrievalService(new RetrievalRepository(db), sources, withFusionOverride({ ...DEFAULT_FUSION, ...variant.fusion }), undefined, softMatch);
      rows.push([variant.label, ...summaryRow(await searchScores(service, questions, variant.mode, score, k))]);
    }
    printSummary(set, questions.length, rows);
  } finally {
    await embedder.close();
    await db.destroy();
  }
}

await main();
