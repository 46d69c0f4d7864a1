/** Ranking metrics over document ids (a result is right when its document is one of the question's right documents), and their tables. */

/** 1 when a result among the first 5 is right. */
export function recallAt5(ranked: string[], right: Set<string>): number {
  return ranked.slice(0, 5).some((doc) => right.has(doc)) ? 1 : 0;
}

/** 1 / rank of the first right result within the first 10, else 0. */
export function reciprocalRankAt10(ranked: string[], right: Set<string>): number {
  const rank = ranked.slice(0, 10).findIndex((doc) => right.has(doc)) + 1;
  return rank > 0 ? 1 / rank : 0;
}

/**
 * Binary nDCG@10 at document level: the first result from each right document gains 1 (more chunks of
 * a document already found gain nothing); the ideal ranks every right document first.
 */
export function ndcgAt10(ranked: string[], right: Set<string>): number {
  const seen = new Set<string>();
  let dcg = 0;
  ranked.slice(0, 10).forEach((doc, index) => {
    if (!right.has(doc) || seen.has(doc)) return;
    seen.add(doc);
    dcg += 1 / Math.log2(index + 2);
  });
  let ideal = 0;
  for (let index = 0; index < Math.min(right.size, 10); index++) ideal += 1 / Math.log2(index + 2);
  return ideal > 0 ? dcg / ideal : 0;
}

const normalised = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** Whether a text quotes the answer span (whitespace and case ignored). */
export function containsSpan(text: string, span: string): boolean {
  return normalised(text).includes(normalised(span));
}

export const mean = (values: number[]) => (values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : NaN);

/** A fixed-width text table: the first column left-aligned, the rest right-aligned. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((row) => row.map((cell) => (typeof cell === 'number' ? (Number.isNaN(cell) ? '-' : cell.toFixed(3)) : cell)))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column].length)));
  return cells.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')).join('\n');
}

/** One question's figures for one ranking (document ids, best first). */
export interface QuestionScore {
  set: string;
  kind: string;
  r: number;
  mrr: number;
  ndcg: number;
}

export function scoreRanking(question: { set: string; kind: string }, ranked: string[], right: Set<string>): QuestionScore {
  return { set: question.set, kind: question.kind, r: recallAt5(ranked, right), mrr: reciprocalRankAt10(ranked, right), ndcg: ndcgAt10(ranked, right) };
}

/** The experiments' columns over a group of questions: recall@5 (all, same, paraphrased), MRR@10, nDCG@10. */
export function summaryRow(scores: QuestionScore[]): number[] {
  const of = (kind?: string) => scores.filter((s) => !kind || s.kind === kind);
  return [mean(of().map((s) => s.r)), mean(of('same').map((s) => s.r)), mean(of('paraphrased').map((s) => s.r)), mean(of().map((s) => s.mrr)), mean(of().map((s) => s.ndcg))];
}

export const SUMMARY_HEADER = ['recall@5', 'same', 'paraphr.', 'MRR@10', 'nDCG@10'];

/** Prints the experiments' summary: the half and its size, then a row of SUMMARY_HEADER's columns per variant. */
export function printSummary(set: string, questions: number, rows: Array<Array<string | number>>): void {
  console.log(`${set}: ${questions} questions`);
  console.log(table(['variant', ...SUMMARY_HEADER], rows));
}
