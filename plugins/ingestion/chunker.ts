import { createHash } from 'node:crypto';
import type { ExtractedDocument, ExtractedSection } from './extracted-document.js';
import { type TokenMeter, tokenMeter } from './token-meter.js';

/**
 * Structure-aware chunking: a chunk never crosses a heading, a sheet or a table row; inside a section
 * it is packed from paragraphs, lines and sentences (words, then characters, only for a sentence longer
 * than a chunk), bounded by the embedder's own tokenizer, with overlap between consecutive chunks.
 */

export interface ChunkDraft {
  ordinal: number;
  text: string;
  page?: number;
  heading?: string;
  sheet?: string;
  row?: number;
  tokenCount: number;
}

export interface ChunkOptions {
  maxTokens: number;
  overlapTokens: number;
  /** RAG_MIN_CHUNK_LENGTH, in characters. */
  minChars: number;
  /** Tokens by the embedder's tokenizer, special tokens excluded (Embedder.countTokens). */
  countTokens: (text: string) => number;
  /** Token counts of single words that outlive the document: one per tokenizer (see tokenMeter). */
  wordTokens?: Map<string, number>;
}

/** The smallest piece packed into chunks: a sentence (or a part of one), counted once. */
interface Unit {
  text: string;
  /** Whitespace that joins it to the unit before: ' ' inside a line, '\n' between lines, '\n\n' between paragraphs. */
  sep: string;
  tokens: number;
  /** Tokens of its whole paragraph when it starts one: lets a chunk end at a paragraph break. */
  paragraphTokens?: number;
  page?: number;
  row?: number;
}

interface Settings {
  maxTokens: number;
  overlapTokens: number;
  minChars: number;
  meter: TokenMeter;
}

interface Segment {
  heading?: string;
  sheet?: string;
  units: Unit[];
}

interface Draft {
  parts: Unit[];
  /** Index in parts of the first unit that is not overlap from the previous chunk. */
  fresh: number;
  text: string;
  tokens: number;
  heading?: string;
  sheet?: string;
}

const SENTENCE_END = /(?<=[.!?…。！？]["'”’)\]]?)\s+(?=\S)/;

/**
 * Stable and content-derived: re-chunking unchanged content gives the same ids. The document's id is
 * part of it, so two files with the same bytes (a copy, a hard link) each have chunks of their own.
 */
export function chunkId(document: { id: string; sha256: string }, ordinal: number, text: string): string {
  return createHash('sha256').update(`${document.id}\n${document.sha256}\n${ordinal}\n${text}`).digest('hex').slice(0, 32);
}

const joinUnits = (parts: Unit[]) => parts.map((unit, i) => (i ? unit.sep + unit.text : unit.text)).join('');
const sumTokens = (parts: Unit[]) => parts.reduce((sum, unit) => sum + unit.tokens, 0);

export function chunkDocument(document: ExtractedDocument, options: ChunkOptions): ChunkDraft[] {
  const maxTokens = Math.max(1, Math.floor(options.maxTokens));
  const sample = document.sections.slice(0, 8).map((section) => section.text).join('\n');
  const settings: Settings = {
    maxTokens,
    overlapTokens: Math.max(0, Math.min(options.overlapTokens, Math.floor(maxTokens / 2))),
    minChars: options.minChars,
    meter: tokenMeter(options.countTokens, sample, options.wordTokens),
  };
  const drafts = segmentsOf(document.sections, settings).flatMap((segment) => packSegment(segment, settings));
  return mergeShort(drafts, settings).map((draft, ordinal) => {
    const first = draft.parts[0];
    const chunk: ChunkDraft = { ordinal, text: draft.text, tokenCount: draft.tokens };
    if (first.page !== undefined) chunk.page = first.page;
    if (draft.heading !== undefined) chunk.heading = draft.heading;
    if (draft.sheet !== undefined) chunk.sheet = draft.sheet;
    if (first.row !== undefined) chunk.row = first.row;
    return chunk;
  });
}

/**
 * Consecutive text sections under one heading and sheet form one segment (pages of a PDF flow on); a
 * table row is its own, and so is a page read by OCR (its chunks carry that page's confidence).
 */
function segmentsOf(sections: ExtractedSection[], options: Settings): Segment[] {
  const segments: Segment[] = [];
  let previous: ExtractedSection | undefined;
  for (const section of sections) {
    const ocrPageBreak = previous?.ocrConfidence !== undefined || section.ocrConfidence !== undefined;
    const continues =
      previous && !ocrPageBreak && previous.kind === 'text' && section.kind === 'text' && !section.boundary && previous.heading === section.heading && previous.sheet === section.sheet;
    if (!continues) segments.push({ heading: section.heading, sheet: section.sheet, units: [] });
    const segment = segments[segments.length - 1];
    const units = unitsOf(section, options);
    if (units.length && segment.units.length) units[0].sep = '\n';
    segment.units.push(...units);
    previous = section;
  }
  return segments.filter((segment) => segment.units.length);
}

function unitsOf(section: ExtractedSection, options: Settings): Unit[] {
  const units: Unit[] = [];
  const where = { page: section.page, row: section.row };
  for (const paragraph of section.text.split(/\n[ \t]*\n\s*/)) {
    const start = units.length;
    for (const line of paragraph.split('\n')) {
      let lineStart = true;
      for (const sentence of line.trim().split(SENTENCE_END)) {
        if (!sentence) continue;
        const sep = units.length === start ? '\n\n' : lineStart ? '\n' : ' ';
        lineStart = false;
        fitted(sentence, options).forEach((piece, i) => units.push({ ...piece, sep: i ? ' ' : sep, ...where }));
      }
    }
    if (units.length > start) units[start].paragraphTokens = sumTokens(units.slice(start));
  }
  return units;
}

/** A sentence as pieces of at most maxTokens: halves on a word boundary (or mid-string) until each fits. */
function fitted(text: string, options: Settings): Array<{ text: string; tokens: number }> {
  const tokens = options.meter.count(text);
  if (tokens <= options.maxTokens || text.length < 2) return [{ text, tokens }];
  const middle = Math.floor(text.length / 2);
  const space = text.lastIndexOf(' ', middle) > 0 ? text.lastIndexOf(' ', middle) : text.indexOf(' ', middle);
  // Never cut between the halves of a surrogate pair.
  const cut = space > 0 && space < text.length - 1 ? space : /[\uDC00-\uDFFF]/.test(text[middle]) ? middle + 1 : middle;
  return [...fitted(text.slice(0, cut).trim(), options), ...fitted(text.slice(cut).trim(), options)].filter((piece) => piece.text);
}

/** Greedy packing of one segment's units; the next chunk starts with about overlapTokens of the last one. */
function packSegment(segment: Segment, options: Settings): Draft[] {
  const { maxTokens, meter } = options;
  const { units } = segment;
  const drafts: Draft[] = [];
  let carry: Unit[] = [];
  let start = 0;
  while (start < units.length) {
    let tokens = sumTokens(carry);
    while (carry.length && tokens + units[start].tokens > maxTokens) tokens -= carry.shift()!.tokens;
    let end = start;
    while (end < units.length && (end === start || tokens + units[end].tokens <= maxTokens)) {
      const unit = units[end];
      // End at a paragraph break rather than mid-paragraph once the chunk is half full.
      if (end > start && unit.paragraphTokens !== undefined && tokens >= maxTokens / 2 && tokens + unit.paragraphTokens > maxTokens) break;
      tokens += unit.tokens;
      end++;
    }
    let parts = [...carry, ...units.slice(start, end)];
    let text = joinUnits(parts);
    // The sum is the count for an additive tokenizer; another one may need a unit less.
    let count = meter.additive ? tokens : meter.count(text);
    while (count > maxTokens && parts.length > 1) {
      if (end - start > 1) end--;
      else carry.shift();
      parts = [...carry, ...units.slice(start, end)];
      text = joinUnits(parts);
      count = meter.count(text);
    }
    drafts.push({ parts, fresh: carry.length, text, tokens: count, heading: segment.heading, sheet: segment.sheet });
    start = end;
    carry = overlapOf(parts, options);
  }
  return foldShortTail(drafts, options);
}

/** The last units of a chunk worth at most overlapTokens; the tail words of its last unit when that unit alone is longer. */
function overlapOf(parts: Unit[], options: Settings): Unit[] {
  const { overlapTokens, meter } = options;
  if (overlapTokens <= 0) return [];
  const tail: Unit[] = [];
  let tokens = 0;
  for (let i = parts.length - 1; i > 0 && tokens + parts[i].tokens <= overlapTokens; i--) {
    tail.unshift(parts[i]);
    tokens += parts[i].tokens;
  }
  if (tail.length) return tail;
  const last = parts[parts.length - 1];
  const words = last.text.split(' ');
  const kept: string[] = [];
  for (let i = words.length - 1; i > 0; i--) {
    const wordTokens = meter.count(words[i]);
    if (tokens + wordTokens > overlapTokens) break;
    kept.unshift(words[i]);
    tokens += wordTokens;
  }
  return kept.length ? [{ text: kept.join(' '), sep: '', tokens, page: last.page, row: last.row }] : [];
}

/** A short last chunk of a segment goes back into the chunk before it, without repeating the overlap. */
function foldShortTail(drafts: Draft[], options: Settings): Draft[] {
  const last = drafts[drafts.length - 1];
  const before = drafts[drafts.length - 2];
  if (!before || last.text.length >= options.minChars) return drafts;
  const parts = [...before.parts, ...last.parts.slice(last.fresh)];
  const text = joinUnits(parts);
  const tokens = options.meter.additive ? before.tokens + sumTokens(last.parts.slice(last.fresh)) : options.meter.count(text);
  if (tokens > options.maxTokens) return drafts;
  return [...drafts.slice(0, -2), { ...before, parts, text, tokens }];
}

const sameContext = (a: Draft | undefined, b: Draft | undefined) => !!a && !!b && a.heading === b.heading && a.sheet === b.sheet;

/** No chunk under minChars: a short one joins a neighbour (the one under its own heading first) or, failing that, is dropped. */
function mergeShort(drafts: Draft[], options: Settings): Draft[] {
  const merged: Draft[] = [];
  const queue = [...drafts];
  const join = (first: Draft, second: Draft): Draft | undefined => {
    const text = `${first.text}\n\n${second.text}`;
    const tokens = options.meter.additive ? first.tokens + second.tokens : options.meter.count(text);
    if (tokens > options.maxTokens) return undefined;
    const parts = [...first.parts, { ...second.parts[0], sep: '\n\n' }, ...second.parts.slice(1)];
    return { parts, fresh: first.fresh, text, tokens, heading: first.heading, sheet: first.sheet };
  };
  for (let i = 0; i < queue.length; i++) {
    const draft = queue[i];
    if (draft.text.length >= options.minChars) {
      merged.push(draft);
      continue;
    }
    const previous = merged[merged.length - 1];
    const next = queue[i + 1];
    const forwardFirst = !sameContext(previous, draft) && (sameContext(draft, next) || !previous);
    const tryPrevious = () => {
      const joined = previous && join(previous, draft);
      if (joined) merged[merged.length - 1] = joined;
      return !!joined;
    };
    const tryNext = () => {
      const joined = next && join(draft, next);
      if (joined) queue[i + 1] = joined;
      return !!joined;
    };
    if (forwardFirst) {
      if (!tryNext()) tryPrevious();
    } else if (!tryPrevious()) tryNext();
  }
  return merged;
}
