import type { ChatMessage } from '../../native/llm/index.js';
import type { PastTurn, SourceView } from '../conversations/index.js';
import type { Quote } from './extractive.js';
import { stripMarkers } from './markers.js';

/** The fixed texts and the prompt layout: system, then history, then one user message with the numbered sources and the question. */

const SYSTEM_PROMPT =
  'You are Hearth, an assistant that answers questions using only the numbered sources given with the question. ' +
  'Cite the sources you use by their numbers in square brackets, like [1] or [2]. ' +
  'If the sources do not contain the answer, say that you could not find it in the documents. Answer concisely.';

export const NOTHING_FOUND = 'I could not find this in the documents.';
export const EXTRACTIVE_PREFIX = 'No language model is installed; here are the most relevant passages:';

/** "report.pdf, page 2, Chapter 2" */
function sourceLabel(source: Pick<SourceView, 'filename' | 'page' | 'heading'>): string {
  return [source.filename, source.page !== undefined ? `page ${source.page}` : null, source.heading ?? null].filter(Boolean).join(', ');
}

export function sourceBlock(source: SourceView): string {
  return `[${source.marker}] ${sourceLabel(source)}\n${source.text}`;
}

function questionMessage(sources: SourceView[], query: string): string {
  return sources.length ? `Sources:\n\n${sources.map(sourceBlock).join('\n\n')}\n\nQuestion: ${query}` : `Question: ${query}`;
}

export function buildMessages(history: PastTurn[], sources: SourceView[], query: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    ...history.flatMap((turn): ChatMessage[] => [
      { role: 'user', content: turn.query },
      { role: 'assistant', content: stripMarkers(turn.answer) },
    ]),
    { role: 'user', content: questionMessage(sources, query) },
  ];
}

/** The answer without a model, in pieces (one per quote) so that a stream has deltas to send: each quote verbatim, with its marker and place. */
export function extractiveAnswer(quotes: Quote[]): string[] {
  return [EXTRACTIVE_PREFIX, ...quotes.map(({ source, text }) => `\n\n[${source.marker}] ${sourceLabel(source)}:\n"${text}"`)];
}
