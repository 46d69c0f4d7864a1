import { performance } from 'node:perf_hooks';
import type { CrossEncoder } from '../../native/reranker/index.js';
import type { Scored } from './fusion.js';

export interface RerankSettings {
  /** Fused candidates the reranker may score, best first (RERANK_TOP_N). */
  topN: number;
  /** Time the stage may take per query (RERANK_BUDGET_MS); 0 turns it off. */
  budgetMs: number;
}

/** What the stage did, reported in retrieval_settings.rerank. */
export interface RerankReport {
  model_id: string;
  top_n: number;
  budget_ms: number;
  /** Candidates actually scored: fewer than top_n when the budget ran out. */
  scored: number;
  ms: number;
}

/**
 * Scores the first topN candidates with the cross-encoder, a few pairs per run, and starts no run that
 * would end past the budget, judged by the last run's time (the first run always goes). The scored ones come first, by the reranker's
 * logit; the rest keep their fused order behind them. Scores stay the fused ones.
 */
export async function rerankCandidates(
  reranker: CrossEncoder,
  query: string,
  candidates: Scored[],
  textOf: (item: Scored) => string,
  settings: RerankSettings,
  batch: number,
): Promise<{ list: Scored[]; report: RerankReport }> {
  const started = performance.now();
  const pool = candidates.slice(0, settings.topN);
  const logits: number[] = [];
  let lastRun = 0;
  // A run starts only if, taking as long as the last one, it would end within the budget.
  while (logits.length < pool.length && (logits.length === 0 || performance.now() - started + lastRun <= settings.budgetMs)) {
    const runStarted = performance.now();
    const slice = pool.slice(logits.length, logits.length + batch);
    logits.push(...(await reranker.score(query, slice.map(textOf))));
    lastRun = performance.now() - runStarted;
  }
  const scored = pool.slice(0, logits.length).map((item, i) => ({ item, logit: logits[i], i }));
  // Ties keep the fused order.
  scored.sort((a, b) => b.logit - a.logit || a.i - b.i);
  const ms = Math.round((performance.now() - started) * 100) / 100;
  return {
    list: [...scored.map((s) => s.item), ...candidates.slice(logits.length)],
    report: { model_id: reranker.modelId, top_n: settings.topN, budget_ms: settings.budgetMs, scored: logits.length, ms },
  };
}
