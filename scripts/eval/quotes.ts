/**
 * Tuning the extractive answers on an index `npm run eval` left behind (HEARTH_EVAL_WORK): the chat's own path with no
 * chat model (its retrieval, relevantResults, extractiveQuotes, extractiveAnswer) in-process, once per variant of
 * EXTRACTIVE_SETTINGS, on one half of the questions (HEARTH_EVAL_SET, default dev). Prints the share of questions whose
 * answer quotes the span, as `npm run eval` counts it, and the share whose sources hold it; per variant also the
 * answers holding a quote that ends introducing what it leaves out (a colon, "e.g.,": INTRODUCES) and the mean words quoted.
 * `HEARTH_EVAL_QUOTE_VARIANTS='{"bonus 1":{"termBonus":1}}' HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... npx tsx scripts/eval/quotes.ts`
 */
import { CHAT_SOFT_MATCH_CHUNKS } from '../../core/config.js';
import { EXTRACTIVE_SETTINGS, type ExtractiveSettings, INTRODUCES, extractiveQuotes, quoteEmbedder, quoteWordTable } from '../../plugins/chat/extractive.js';
import { extractiveAnswer } from '../../plugins/chat/prompt.js';
import { relevantResults } from '../../plugins/chat/relevance.js';
import { CHAT_DEFAULT_K, toSource } from '../../plugins/chat/service.js';
import { CHAT_FUSION_WEIGHTS, CHAT_KEYWORD_CONFIDENCE, DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService } from '../../plugins/retrieval/service.js';
import { evalWork, openEvalDatabase, openEvalVectors } from './eval-index.js';
import { containsSpan, table } from './metrics.js';

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const variants: Record<string, Partial<ExtractiveSettings>> = { 'EXTRACTIVE_SETTINGS': {}, ...JSON.parse(process.env.HEARTH_EVAL_QUOTE_VARIANTS ?? '{}') };
  const { db } = await openEvalDatabase(work);
  const { embedder, vectors } = await openEvalVectors(work);
  try {
    // The chat's retrieval: the fusion's own settings (no per-document cap) at the chat's weights, k as the chat asks.
    // The chat's own weights, or HEARTH_EVAL_WEIGHTS ('{"vector":3,"keyword":1,"document":3}') to measure others.
    const weights = { ...CHAT_FUSION_WEIGHTS, ...JSON.parse(process.env.HEARTH_EVAL_WEIGHTS ?? '{}') };
    // Soft term matching as CHAT_SOFT_MATCH_CHUNKS runs it in the chat's retrieval (on by default).
    const softMatch = { chunks: Number(process.env.CHAT_SOFT_MATCH_CHUNKS ?? CHAT_SOFT_MATCH_CHUNKS) };
    const service = new RetrievalService(new RetrievalRepository(db), { embedder: () => embedder, vectors: () => vectors }, { ...DEFAULT_FUSION, weights, keywordConfidence: CHAT_KEYWORD_CONFIDENCE }, undefined, softMatch);
    // As the chat embeds for quoting: word vectors kept between answers.
    const embed = quoteEmbedder(embedder, quoteWordTable());
    const quoted = new Map(Object.keys(variants).map((label) => [label, { span: 0, dangling: 0, words: 0 }]));
    let held = 0;
    for (const question of questions) {
      const search = await service.search({ query: question.question, k: CHAT_DEFAULT_K, mode: 'hybrid', groups: ['everyone'] });
      const sources = relevantResults(search.results, question.question, search.retrieval_settings.score).map(toSource);
      if (sources.some((source) => containsSpan(source.text, question.answer))) held++;
      for (const [label, settings] of Object.entries(variants)) {
        const quotes = await extractiveQuotes(question.question, sources, embed, { ...EXTRACTIVE_SETTINGS, ...settings });
        const counts = quoted.get(label)!;
        if (containsSpan(extractiveAnswer(quotes).join(''), question.answer)) counts.span++;
        if (quotes.some((quote) => INTRODUCES.test(quote.text))) counts.dangling++;
        counts.words += quotes.reduce((sum, quote) => sum + quote.text.split(/\s+/).filter(Boolean).length, 0);
      }
    }
    const share = (count: number) => (count / questions.length).toFixed(3);
    console.log(`${set}: ${questions.length} questions; the sources hold the span for ${share(held)}`);
    const rows = [...quoted].map(([label, { span, dangling, words }]) => [label, share(span), String(dangling), (words / questions.length).toFixed(1)]);
    console.log(table(['variant', 'answer quotes span', 'a quote ends introducing', 'words quoted'], rows));
  } finally {
    await embedder.close();
    await db.destroy();
  }
}

await main();
