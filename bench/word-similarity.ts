/**
 * A word-similarity sanity check for an embedder that does not reuse WordNet's synonym sets: a
 * hand-written list of topically related pairs (things that go together in documents: a doctor and a
 * hospital, rain and an umbrella), not synonyms, against the same words re-paired at random. Reports
 * the mean cosine of each group and the AUC (how often a related pair outscores an unrelated one),
 * and, for honesty, how many related pairs happen to share a WordNet synset anyway.
 * Alone: `MODEL_DIR=… npx tsx bench/word-similarity.ts`.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Embedder } from '../native/embeddings/index.js';

/** Written by hand for this check (topical association, deliberately not synonymy). */
export const RELATED_PAIRS: Array<[string, string]> = [
  ['doctor', 'hospital'], ['rain', 'umbrella'], ['bread', 'bakery'], ['car', 'garage'], ['teacher', 'school'],
  ['pilot', 'airplane'], ['book', 'library'], ['money', 'bank'], ['fire', 'smoke'], ['winter', 'snow'],
  ['coffee', 'cup'], ['painter', 'canvas'], ['farmer', 'tractor'], ['computer', 'keyboard'], ['fish', 'river'],
  ['judge', 'court'], ['nurse', 'patient'], ['cook', 'kitchen'], ['soldier', 'army'], ['tooth', 'dentist'],
  ['salary', 'employee'], ['invoice', 'payment'], ['password', 'login'], ['heater', 'warm'], ['engine', 'fuel'],
  ['garden', 'flower'], ['music', 'guitar'], ['ship', 'harbour'], ['student', 'exam'], ['police', 'crime'],
  ['bee', 'honey'], ['church', 'priest'], ['ocean', 'wave'], ['election', 'vote'], ['medicine', 'illness'],
  ['wedding', 'bride'], ['train', 'railway'], ['camera', 'photograph'], ['tree', 'leaf'], ['lawyer', 'contract'],
];

/** Unrelated control pairs: each first word with the second word of a pair 13 places away. */
export function randomPairs(pairs = RELATED_PAIRS): Array<[string, string]> {
  return pairs.map(([a], i) => [a, pairs[(i + 13) % pairs.length][1]]);
}

export interface SimilarityReport {
  pairs: number;
  relatedMean: number;
  randomMean: number;
  /** P(cos(related) > cos(random)) over all related × random combinations. */
  auc: number;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i], 0);

export async function wordSimilarity(embedder: Embedder, pairs = RELATED_PAIRS): Promise<SimilarityReport> {
  const score = async (list: Array<[string, string]>) => {
    const left = await embedder.embed(list.map((p) => p[0]));
    const right = await embedder.embed(list.map((p) => p[1]));
    return left.map((v, i) => dot(v, right[i]));
  };
  const related = await score(pairs);
  const random = await score(randomPairs(pairs));
  let wins = 0;
  for (const r of related) for (const u of random) wins += r > u ? 1 : r === u ? 0.5 : 0;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { pairs: pairs.length, relatedMean: mean(related), randomMean: mean(random), auc: wins / (related.length * random.length) };
}

/** Related pairs whose two words are members of one WordNet synset (the overlap with the training data's synonymy). */
export async function pairsSharingASynset(pairs = RELATED_PAIRS): Promise<Array<[string, string]>> {
  const { readSynsets } = await import('../plugins/search-index/default-embedder/index.js');
  const members = new Map<string, Set<string>>();
  for (const s of await readSynsets()) for (const w of s.words) (members.get(w) ?? members.set(w, new Set()).get(w)!).add(s.key);
  return pairs.filter(([a, b]) => [...(members.get(a) ?? [])].some((k) => members.get(b)?.has(k)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { loadEmbedder } = await import('../native/embeddings/index.js');
  const modelDir = process.env.MODEL_DIR;
  if (!modelDir) throw new Error('set MODEL_DIR to a folder with an installed embedding model');
  const embedder = await loadEmbedder({ modelDir, device: 'cpu' });
  if (!embedder) throw new Error(`no embedding model in ${modelDir}`);
  const report = await wordSimilarity(embedder);
  const shared = await pairsSharingASynset();
  console.log(
    `word similarity (${report.pairs} hand-written related pairs vs re-paired controls), ${embedder.modelId}: related mean cos ${report.relatedMean.toFixed(3)}, random ${report.randomMean.toFixed(3)}, AUC ${report.auc.toFixed(3)}; pairs sharing a WordNet synset: ${shared.length} (${shared.map((p) => p.join('/')).join(', ') || 'none'})`,
  );
  await embedder.close();
}
