/**
 * Checks candidate evaluation questions against the corpus, and computes what the question file records of each:
 * `overlap` and `alt_docs` (docs/evaluation.md, "Writing the question file"). Questions are written by people
 * (or helpers) from the documents' meaning; this script only measures and refuses.
 * `npx tsx scripts/eval/check-questions.ts CANDIDATES.jsonl [--write OUT.jsonl] [--node-modules DIR | --corpus DIR]`
 * (`--corpus`: a prebuilt corpus folder, e.g. scripts/eval/man-corpus.ts's, every file in it a document).
 * A candidate line needs `question`, `doc` (a corpus id), `answer` and `kind`; `--write` keeps the lines that pass,
 * with `overlap` and `alt_docs` filled in (`id` and `set` are assigned when the file is put together).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { STOPWORDS } from '../../core/text/words.js';
import { listCorpus, listFolder } from './corpus.js';

/** A paraphrased question shares at most this share of its content words with the text around its answer. */
export const MAX_PARAPHRASED_OVERLAP = 0.3;
/** Characters of the document around the answer span's middle that the overlap is measured against. */
const AROUND = 1000;
const SPAN_WORDS = { min: 3, max: 40 };
/** A span found verbatim in more other documents than this is a fact many packages state alike. */
const MAX_ALT_DOCS = 3;

const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();
const contentWords = (text: string) => new Set((text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((word) => !STOPWORDS.has(word)));

/** |content words of the question ∩ content words of the text| / |content words of the question|, to 3 decimals. */
export function overlapOf(question: string, text: string): number {
  const asked = contentWords(question);
  if (!asked.size) return 0;
  const present = contentWords(text);
  let shared = 0;
  for (const word of asked) if (present.has(word)) shared++;
  return Math.round((shared / asked.size) * 1000) / 1000;
}

interface Candidate {
  question: string;
  doc: string;
  answer: string;
  kind: string;
}

/** The problems of one candidate (none: it passes), its overlap and the other documents holding its span. */
export function checkCandidate(candidate: Candidate, documents: Map<string, string>): { problems: string[]; overlap: number | null; alt_docs: string[] } {
  const problems: string[] = [];
  if (candidate.kind !== 'same' && candidate.kind !== 'paraphrased') problems.push('kind must be same or paraphrased');
  const text = documents.get(candidate.doc);
  if (text === undefined) return { problems: [...problems, `not a corpus document: ${candidate.doc}`], overlap: null, alt_docs: [] };
  const span = squeeze(candidate.answer);
  const words = span.split(' ').length;
  if (words < SPAN_WORDS.min || words > SPAN_WORDS.max) problems.push(`the answer has ${words} words (${SPAN_WORDS.min}-${SPAN_WORDS.max})`);
  const at = text.indexOf(span);
  if (at < 0) return { problems: [...problems, 'the answer is not found verbatim in the document (whitespace aside)'], overlap: null, alt_docs: [] };
  const middle = at + Math.floor(span.length / 2);
  const overlap = overlapOf(candidate.question, text.slice(Math.max(0, middle - AROUND / 2), middle + AROUND / 2));
  if (candidate.kind === 'paraphrased' && overlap > MAX_PARAPHRASED_OVERLAP) problems.push(`paraphrased, but its overlap is ${overlap} (at most ${MAX_PARAPHRASED_OVERLAP})`);
  const altDocs = [...documents].filter(([id, other]) => id !== candidate.doc && other.includes(span)).map(([id]) => id);
  if (altDocs.length > MAX_ALT_DOCS) problems.push(`the answer is in ${altDocs.length} other documents: a fact many state alike`);
  return { problems, overlap, alt_docs: altDocs };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const file = args[0];
  if (!file || file.startsWith('--')) throw new Error('usage: tsx scripts/eval/check-questions.ts CANDIDATES.jsonl [--write OUT.jsonl] [--node-modules DIR | --corpus DIR]');
  const folder = option('--corpus');
  const corpus = folder ? await listFolder(path.resolve(folder)) : await listCorpus(path.resolve(option('--node-modules') ?? 'node_modules'));
  const documents = new Map(await Promise.all(corpus.map(async (d) => [d.id, squeeze(await readFile(d.file, 'utf8'))] as const)));
  const kept: string[] = [];
  let refused = 0;
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    const candidate = JSON.parse(line) as Candidate;
    const { problems, overlap, alt_docs } = checkCandidate(candidate, documents);
    console.log(`${problems.length ? 'BAD' : 'OK '} overlap=${overlap ?? '-'} alt=${alt_docs.length} ${candidate.doc} :: ${candidate.question}`);
    if (problems.length) {
      console.log(`     ${problems.join('; ')}`);
      refused++;
    } else kept.push(JSON.stringify({ ...candidate, overlap, alt_docs }));
  }
  console.log(`${kept.length} pass, ${refused} refused`);
  const out = option('--write');
  if (out) await writeFile(out, kept.length ? `${kept.join('\n')}\n` : '');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
