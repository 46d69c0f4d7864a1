import type { Generator } from '../../native/llm/index.js';

/**
 * The deterministic query classifier: small talk is answered without retrieval, a document question
 * goes to retrieval, and a question naming files or years goes to retrieval with metadata hints
 * (the filter hooks turn them into search filters). Cases the rules cannot tell are 'ambiguous'.
 */
type SmallTalk = 'greeting' | 'thanks' | 'farewell' | 'acknowledgement' | 'about' | 'chit_chat';

export interface MetadataHints {
  /** File names the question names, lower case ("in budget-2023.pdf"). */
  filenames: string[];
  /** A year or year range the question names; null ends are open. */
  years: { from: number | null; to: number | null } | null;
}

export type Classification =
  | { kind: 'small_talk'; smallTalk: SmallTalk; by: 'rules' | 'model' }
  | { kind: 'document'; by: 'rules' | 'model'; ambiguous: boolean }
  | { kind: 'metadata'; by: 'rules'; hints: MetadataHints };

const SMALL_TALK: [SmallTalk, RegExp][] = [
  ['greeting', /^(hi|hello|hey|hiya|howdy|greetings|yo|good (morning|afternoon|evening|day)|how are you( doing)?( today)?|whats up|sup)( there| everyone| all| hearth)?$/],
  ['thanks', /^((ok|okay|great|perfect|awesome|cool|nice) )?(thanks|thank you|thank u|thx|ty|cheers|many thanks)( (a lot|so much|very much|again|a bunch))?( hearth)?$/],
  ['farewell', /^(bye|bye bye|goodbye|good bye|see you|see ya|cya|later|good night)( for now| later| then)?$/],
  ['acknowledgement', /^(ok|okay|k|cool|great|nice|perfect|awesome|got it|i see|understood|alright|all right|sounds good|nice one|great job)$/],
  ['about', /^(who are you|what are you|what can you do|what do you do|how do you work|help)$/],
];

export const SMALL_TALK_ANSWERS: Record<SmallTalk, string> = {
  greeting: 'Hello! Ask me a question about your documents and I will answer it with its sources.',
  thanks: "You're welcome! Is there anything else you would like to know from the documents?",
  farewell: 'Goodbye! Come back whenever you have a question about your documents.',
  acknowledgement: 'Glad that helps. Ask another question whenever you like.',
  about: 'I am Hearth: I answer questions from the documents indexed on this box and show the passages each answer comes from.',
  chit_chat: "I'm here to answer questions about your documents. What would you like to know?",
};

const EXTENSIONS = 'pdf|docx?|txt|md|markdown|csv|xlsx?|html?|png|jpe?g|tiff?';
const QUOTED_FILE = new RegExp(`["“'‘]([^"”'’\\n]{1,200}\\.(?:${EXTENSIONS}))["”'’]`, 'giu');
const BARE_FILE = new RegExp(`(?:^|[\\s(\\[])([\\p{L}\\p{N}_][\\p{L}\\p{N}_.\\-]{0,200}\\.(?:${EXTENSIONS}))(?=$|[\\s"',;:!?)\\]])`, 'giu');
const YEAR = /\b(19\d{2}|20\d{2})\b/g;
const QUESTION_WORD = /^(who|what|when|where|why|how|which|whose|whom|is|are|was|were|do|does|did|can|could|should|would|will|list|show|find|give|tell|explain|summari[sz]e|describe|compare)\b/;

/** Lower case, words only: "Thanks!!" and "thanks" read the same. */
export function normalise(query: string): string {
  return query.toLowerCase().replace(/[’']/g, '').replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

export function classifyByRules(query: string): Classification {
  const text = normalise(query);
  for (const [smallTalk, pattern] of SMALL_TALK) if (pattern.test(text)) return { kind: 'small_talk', smallTalk, by: 'rules' };
  const hints = metadataHints(query);
  if (hints) return { kind: 'metadata', by: 'rules', hints };
  const words = text.split(' ').filter(Boolean);
  // A short remark with no question in it ("hmm interesting") could be either.
  const ambiguous = words.length <= 3 && !query.includes('?') && !QUESTION_WORD.test(text);
  return { kind: 'document', by: 'rules', ambiguous };
}

export function metadataHints(query: string): MetadataHints | null {
  const filenames = new Set<string>();
  for (const match of query.matchAll(QUOTED_FILE)) filenames.add(match[1].toLowerCase());
  // A quoted name with spaces must not also yield its last word ("Notes.md" of "Q1 Notes.md").
  for (const match of query.replace(QUOTED_FILE, ' ').matchAll(BARE_FILE)) filenames.add(match[1].toLowerCase());
  const years = yearRange(query.toLowerCase());
  return filenames.size || years ? { filenames: [...filenames], years } : null;
}

function yearRange(text: string): MetadataHints['years'] {
  const found = [...text.matchAll(YEAR)].map((match) => Number(match[1]));
  if (!found.length) return null;
  const range = text.match(/\b(?:between|from)\s+(\d{4})\s+(?:and|to|until|till)\s+(\d{4})\b/) ?? text.match(/\b(\d{4})\s*[-–]\s*(\d{4})\b/);
  if (range) return { from: Math.min(+range[1], +range[2]), to: Math.max(+range[1], +range[2]) };
  const open = text.match(/\b(since|after|before|until)\s+(\d{4})\b/);
  if (open) {
    const year = Number(open[2]);
    if (open[1] === 'since') return { from: year, to: null };
    if (open[1] === 'after') return { from: year + 1, to: null };
    return { from: null, to: open[1] === 'before' ? year - 1 : year };
  }
  return { from: Math.min(...found), to: Math.max(...found) };
}

const CLASSIFIER_PROMPT =
  "Decide whether the user's message is small talk (a greeting, thanks, chit-chat) or a question to answer from documents. " +
  'Reply with exactly one word: SMALL_TALK or DOCUMENT.';

/** RAG_CLASSIFIER_LLM_ENABLED: the model settles an ambiguous case, its reply capped at maxTokens; anything unclear stays a document question. */
export async function classifyWithModel(generator: Generator, query: string, maxTokens: number, signal: AbortSignal): Promise<Classification> {
  const result = await generator.generate(
    [
      { role: 'system', content: CLASSIFIER_PROMPT },
      { role: 'user', content: query },
    ],
    { maxTokens, temperature: 0, signal },
  );
  const reply = result.text.toUpperCase();
  return /SMALL[\s_-]?TALK/.test(reply) && !reply.includes('DOCUMENT')
    ? { kind: 'small_talk', smallTalk: 'chit_chat', by: 'model' }
    : { kind: 'document', by: 'model', ambiguous: false };
}
