/** Finding a chunk's words in other text: the chunker and the extractors normalise whitespace, so matches do too. */

export type Span = readonly [start: number, end: number];

interface Words {
  /** Lower-cased words without punctuation at their ends. */
  words: string[];
  /** Where each word starts and ends in the original text. */
  spans: Span[];
}

function wordsOf(text: string): Words {
  const words: string[] = [];
  const spans: Span[] = [];
  for (const match of text.matchAll(/\S+/g)) {
    const word = match[0].toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (!word) continue;
    words.push(word);
    spans.push([match.index!, match.index! + match[0].length]);
  }
  return { words, spans };
}

/** Where `needle` (a chunk) sits in `haystack` (its document's text), word for word; null when it does not. */
export function locateChunk(haystack: string, needle: string): Span | null {
  const exact = haystack.indexOf(needle);
  if (exact >= 0) return [exact, exact + needle.length];
  const doc = wordsOf(haystack);
  const chunk = wordsOf(needle).words;
  if (!chunk.length) return null;
  // The chunk's first words (a window, so a chunk with an overlap prefix still lands), then as far as it agrees.
  const probe = chunk.slice(0, Math.min(8, chunk.length));
  outer: for (let i = 0; i + probe.length <= doc.words.length; i++) {
    for (let j = 0; j < probe.length; j++) if (doc.words[i + j] !== probe[j]) continue outer;
    let end = i + probe.length;
    while (end - i < chunk.length && doc.words[end] === chunk[end - i]) end++;
    return [doc.spans[i][0], doc.spans[end - 1][1]];
  }
  return null;
}

/**
 * The passages of an answer tied to [marker]: the sentence that ends with it ("claim [1].") and the text after
 * it up to the next marker (an extractive answer's "[1] file: "quote""), without their markers.
 */
function citingPassages(answer: string, marker: number): string[] {
  const passages: string[] = [];
  const markers = [...answer.matchAll(/\[(\d{1,3})\]/g)];
  markers.forEach((match, index) => {
    if (Number(match[1]) !== marker) return;
    const start = match.index!;
    const previousEnd = index > 0 ? markers[index - 1].index! + markers[index - 1][0].length : 0;
    const before = answer.slice(previousEnd, start).split(/(?<=[.!?])\s+|\n+/).filter((part) => part.trim()).at(-1) ?? '';
    const nextStart = index + 1 < markers.length ? markers[index + 1].index! : answer.length;
    passages.push(before, answer.slice(start + match[0].length, nextStart));
  });
  return passages;
}

/**
 * The part of a source's text that the answer cites: the longest run of words shared by the source and a
 * passage citing it (at least 3 words), as a span of the source text; null when nothing of it is quoted.
 */
export function citedSpan(answer: string, marker: number, sourceText: string): Span | null {
  const source = wordsOf(sourceText);
  let best: { length: number; end: number } = { length: 0, end: 0 };
  for (const passage of citingPassages(answer, marker)) {
    const words = wordsOf(passage).words;
    // Longest common run of words (dynamic programming over one row).
    let previous = new Array<number>(source.words.length + 1).fill(0);
    for (const word of words) {
      const row = new Array<number>(source.words.length + 1).fill(0);
      for (let j = 1; j <= source.words.length; j++) {
        if (source.words[j - 1] !== word) continue;
        row[j] = previous[j - 1] + 1;
        if (row[j] > best.length) best = { length: row[j], end: j };
      }
      previous = row;
    }
  }
  if (best.length < 3) return null;
  return [source.spans[best.end - best.length][0], source.spans[best.end - 1][1]];
}
