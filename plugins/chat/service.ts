import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { LogPrivacy } from '../../core/logger.js';
import type { SettingsStore } from '../../core/settings/store.js';
import { lexicalView, type Embedder } from '../../native/embeddings/index.js';
import type { Generator } from '../../native/llm/index.js';
import type { AnswerMode, ConversationsService, PastTurn, SourceView } from '../conversations/index.js';
import { CHAT_FUSION_WEIGHTS, CHAT_KEYWORD_CONFIDENCE, type RetrievalService, type RetrievalSettings, type SearchFilters, type SearchMode, type SearchResult } from '../retrieval/index.js';
import { type Classification, type MetadataHints, SMALL_TALK_ANSWERS, classifyByRules, classifyWithModel } from './classifier.js';
import { type EmbedTexts, extractiveQuotes, quoteEmbedder, quoteWordTable } from './extractive.js';
import { MarkerFilter, keepValidMarkers } from './markers.js';
import { NOTHING_FOUND, extractiveAnswer } from './prompt.js';
import { relevantResults } from './relevance.js';
import { type Rewrite, rewriteQuery } from './rewrite.js';
import { expandQuery } from './expand.js';
import { type TokenBudget, fitPrompt } from './token-budget.js';

export const CHAT_DEFAULT_K = 5;
/** Past turns put into the prompt at most (the budget may drop more): older ones rarely help and cost counting. */
const PROMPT_HISTORY_TURNS = 6;

interface ChatRequest {
  query: string;
  conversation_id?: string;
  k?: number;
  mode?: SearchMode;
}

/** A chat whose conversation was checked (owned, or new) before anything is streamed. */
export interface OpenChat {
  userId: string;
  /** The reader's groups, read when the request came in: retrieval and history answer for them only. */
  groups: string[];
  conversationId: string;
  history: PastTurn[];
  request: ChatRequest;
}

type ChatRetrievalSettings = Partial<RetrievalSettings> & {
  k: number;
  mode: SearchMode;
  classification: Classification['kind'];
  retrieved: boolean;
  rewritten_query: string | null;
  expanded_query: string | null;
};

interface ChatAnswer {
  conversation_id: string;
  answer: string;
  sources: SourceView[];
  token_budget: TokenBudget | null;
  retrieval_settings: ChatRetrievalSettings;
  timing: { classify: number; retrieve: number; generate: number };
  mode: AnswerMode;
}

interface ChatRun {
  /** Each piece of the answer, in order, as it is ready (the stream's delta events). */
  onDelta: (text: string) => void;
  /** Aborted when the client goes away: the generation stops and nothing is stored. */
  signal: AbortSignal;
  log: FastifyBaseLogger;
}

/** Metadata rules plug in here: hints from the question in, search filters out (null: no restriction). */
export type FilterHook = (hints: MetadataHints, query: string) => Promise<SearchFilters | null>;

/** Thrown when the client went away mid-answer: there is no one to tell, and nothing is stored. */
export class ChatCancelled extends Error {
  constructor() {
    super('The client went away before the answer was complete');
  }
}

interface ChatDependencies {
  retrieval: Pick<RetrievalService, 'search'>;
  conversations: ConversationsService;
  /** The chat model in force, or null (no model installed: extractive answers). Read per request. */
  generator: () => Generator | null;
  /** The embedding model in force, or null: extractive answers score sentences with it too. Read per request. */
  embedder: () => Embedder | null;
  settings: SettingsStore;
  logPrivacy: LogPrivacy;
  classifierLlm: { enabled: boolean; maxTokens: number };
  /** Soft term matching's chunk budget for the chat's retrieval, whether a chat model answers or passages are quoted (0: off). */
  softMatchChunks: number;
}

/** The chat pipeline: classify, rewrite, retrieve, fit the prompt, generate (or quote), store the turn. No HTTP here. */
export class ChatService {
  private readonly filterHooks: FilterHook[] = [];

  /** Words' vectors for the extractive answers' soft term matching, kept between answers (a token-table embedder's). */
  private readonly quoteWords = quoteWordTable();

  constructor(private readonly deps: ChatDependencies) {}

  addFilterHook(hook: FilterHook): void {
    this.filterHooks.push(hook);
  }

  /** Checks the conversation (404 for an unknown id or someone else's) and loads the turns the answer may use. */
  async open(userId: string, groups: string[], request: ChatRequest): Promise<OpenChat> {
    if (!request.conversation_id) return { userId, groups, conversationId: randomUUID(), history: [], request };
    const turns = Math.max(PROMPT_HISTORY_TURNS, this.deps.settings.current('RAG_QUERY_REWRITE_MAX_TURNS'));
    const history = await this.deps.conversations.history(userId, groups, request.conversation_id, turns);
    return { userId, groups, conversationId: request.conversation_id, history, request };
  }

  async answer(chat: OpenChat, run: ChatRun): Promise<ChatAnswer> {
    const { request } = chat;
    const generator = this.deps.generator();
    const mode: AnswerMode = generator ? 'generative' : 'extractive';
    const timing = { classify: 0, retrieve: 0, generate: 0 };
    let answer = '';
    const emit = (text: string) => {
      if (!text) return;
      answer += text;
      run.onDelta(text);
    };

    let started = performance.now();
    const classification = await this.classify(request.query, generator, run);
    const rewrite = classification.kind === 'small_talk' ? unchanged(request.query) : await this.rewrite(chat, generator, run.signal);
    timing.classify = elapsed(started);
    const base = { k: request.k ?? CHAT_DEFAULT_K, mode: request.mode ?? 'hybrid', classification: classification.kind, rewritten_query: rewrite.rewritten, expanded_query: null };

    let sources: SourceView[] = [];
    let tokenBudget: TokenBudget | null = null;
    let settings: ChatRetrievalSettings = { ...base, retrieved: false };
    if (classification.kind === 'small_talk') {
      emit(SMALL_TALK_ANSWERS[classification.smallTalk]);
    } else {
      started = performance.now();
      // Every question goes through the hooks: metadata rules classify by their own patterns, not by the hints.
      const hints = classification.kind === 'metadata' ? classification.hints : NO_HINTS;
      const filters = await this.filters(hints, request.query);
      const expanded = generator ? await this.expand(rewrite.query, generator, run) : null;
      const query = expanded ?? rewrite.query;
      const search = await this.deps.retrieval.search({ query, k: base.k, mode: base.mode, filters, groups: chat.groups, weights: CHAT_FUSION_WEIGHTS, keywordConfidence: CHAT_KEYWORD_CONFIDENCE, softMatchChunks: this.deps.softMatchChunks });
      settings = { ...search.retrieval_settings, ...base, expanded_query: expanded, ...(filters ? { classification: 'metadata' as const } : {}), retrieved: true };
      sources = relevantResults(search.results, query, search.retrieval_settings.score).map(toSource);
      timing.retrieve = elapsed(started);

      started = performance.now();
      if (!sources.length) emit(NOTHING_FOUND);
      else if (!generator) extractiveAnswer(await extractiveQuotes(rewrite.query, sources, this.embedTexts())).forEach(emit);
      else ({ sources, tokenBudget } = await this.generate(generator, chat, sources, emit, run));
      timing.generate = elapsed(started);
    }

    if (run.signal.aborted) throw new ChatCancelled();
    await this.deps.conversations.record({ userId: chat.userId, conversationId: chat.conversationId, query: request.query, answer, sources, mode });
    run.log.info(
      { event: 'chat.query', user: this.deps.logPrivacy.user(chat.userId), query: this.deps.logPrivacy.query(request.query), classification: classification.kind, mode, sources: sources.length, timing },
      'chat answered',
    );
    return { conversation_id: chat.conversationId, answer, sources, token_budget: tokenBudget, retrieval_settings: settings, timing, mode };
  }

  private embedTexts(): EmbedTexts {
    const embedder = this.deps.embedder();
    return quoteEmbedder(embedder && lexicalView(embedder), this.quoteWords);
  }

  private async classify(query: string, generator: Generator | null, run: ChatRun): Promise<Classification> {
    const rules = classifyByRules(query);
    if (rules.kind !== 'document' || !rules.ambiguous || !generator || !this.deps.classifierLlm.enabled) return rules;
    try {
      return await classifyWithModel(generator, query, this.deps.classifierLlm.maxTokens, run.signal);
    } catch (err) {
      if (run.signal.aborted) throw new ChatCancelled();
      // The rules' answer (a document question) is a safe default when the model cannot say.
      run.log.warn({ err }, 'classifier model failed; using the rules');
      return rules;
    }
  }

  private async rewrite(chat: OpenChat, generator: Generator | null, signal: AbortSignal): Promise<Rewrite> {
    if (!this.deps.settings.current('RAG_QUERY_REWRITE_ENABLED')) return unchanged(chat.request.query);
    const turns = chat.history.slice(-this.deps.settings.current('RAG_QUERY_REWRITE_MAX_TURNS'));
    try {
      return await rewriteQuery(chat.request.query, turns, generator, signal);
    } catch {
      if (signal.aborted) throw new ChatCancelled();
      // The model could not rewrite (busy, failing): the previous questions' terms still can.
      return rewriteQuery(chat.request.query, turns, null, signal);
    }
  }

  /** RAG_QUERY_EXPANSION_ENABLED: the model's extra terms, or null (off, none offered, or the model failed). */
  private async expand(query: string, generator: Generator, run: ChatRun): Promise<string | null> {
    if (!this.deps.settings.current('RAG_QUERY_EXPANSION_ENABLED')) return null;
    try {
      return await expandQuery(query, generator, run.signal);
    } catch (err) {
      if (run.signal.aborted) throw new ChatCancelled();
      run.log.warn({ err }, 'query expansion failed; searching the question as asked');
      return null;
    }
  }

  private async filters(hints: MetadataHints, query: string): Promise<SearchFilters | undefined> {
    let merged: SearchFilters | undefined;
    for (const hook of this.filterHooks) {
      const filters = await hook(hints, query);
      if (!filters) continue;
      const ids = merged?.document_ids && filters.document_ids ? merged.document_ids.filter((id) => filters.document_ids!.includes(id)) : (filters.document_ids ?? merged?.document_ids);
      merged = { ...merged, ...filters, ...(ids ? { document_ids: ids } : {}) };
    }
    return merged;
  }

  private async generate(generator: Generator, chat: OpenChat, found: SourceView[], emit: (text: string) => void, run: ChatRun) {
    const limit = generator.info().context.effective;
    const history = chat.history.slice(-PROMPT_HISTORY_TURNS);
    const fitted = fitPrompt(generator, limit, history, found, chat.request.query);
    const markers = new MarkerFilter(fitted.sources.length);
    let streamed = false;
    const result = await generator.generate(fitted.messages, {
      maxTokens: fitted.budget.reserved_completion,
      signal: run.signal,
      onToken: (piece) => {
        streamed = true;
        emit(markers.push(piece));
      },
    });
    if (result.stopReason === 'cancelled' || run.signal.aborted) throw new ChatCancelled();
    // A backend that does not stream hands the whole text back at the end.
    emit(streamed ? markers.flush() : keepValidMarkers(result.text, fitted.sources.length));
    if (this.deps.settings.current('RAG_LOG_TOKEN_USAGE')) {
      run.log.info(
        { event: 'chat.token_usage', ...fitted.budget, prompt_tokens: result.promptTokens, completion_tokens: result.completionTokens, stop_reason: result.stopReason, query: this.deps.logPrivacy.query(chat.request.query) },
        'token usage',
      );
    }
    return { sources: fitted.sources, tokenBudget: fitted.trimmed ? fitted.budget : null };
  }
}

const NO_HINTS: MetadataHints = { filenames: [], years: null };
const unchanged = (query: string): Rewrite => ({ query, rewritten: null, by: null });
const elapsed = (started: number) => Math.round((performance.now() - started) * 100) / 100;

export function toSource(result: SearchResult, index: number): SourceView {
  return {
    marker: index + 1,
    chunk_id: result.chunk_id,
    document_id: result.document_id,
    filename: result.filename,
    ...(result.page !== undefined ? { page: result.page } : {}),
    ...(result.heading !== undefined ? { heading: result.heading } : {}),
    score: result.score,
    text: result.text,
  };
}
