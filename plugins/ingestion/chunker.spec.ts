import { describe, expect, it } from 'vitest';
import { type ChunkDraft, type ChunkOptions, chunkDocument, chunkId } from './chunker.js';
import { compactSection, type ExtractedDocument, type ExtractedSection } from './extracted-document.js';
import { prose } from '../../test/fixtures/documents.js';
import { tokenCounter } from '../../test/fixtures/tokenizer.js';

const countTokens = tokenCounter();
const OPTIONS: ChunkOptions = { maxTokens: 128, overlapTokens: 24, minChars: 50, countTokens };
const DOC = { id: 'doc-1', sha256: 'a'.repeat(64) };

/** Pages as pdf-parse gives them: a heading line, then wrapped lines of prose. */
function pdfLike(pages: number): ExtractedDocument {
  const sections: ExtractedSection[] = [];
  for (let page = 1; page <= pages; page++) {
    const text = `Chapter ${page}\nThis is page${page}. ${prose(page, 20)}`.replace(/(.{90}\S*) /g, '$1\n');
    sections.push({ kind: 'text', page, text });
  }
  return { pageCount: pages, sections };
}

const manual: ExtractedDocument = {
  sections: [
    { kind: 'text', heading: 'Introduction', text: `Introduction\n\n${prose(1, 14)}\n\n${prose(2, 10)}` },
    { kind: 'text', heading: 'Safety', text: `Safety\n\nAlways wear a lifejacket. ${prose(3, 25)}` },
    { kind: 'text', heading: 'Contacts', text: `Contacts\n\nCall the harbour master on channel 16 for any emergency at sea.` },
  ],
};

function expectBounds(chunks: ChunkDraft[], options = OPTIONS): void {
  expect(chunks.length).toBeGreaterThan(0);
  chunks.forEach((chunk, i) => {
    expect(chunk.ordinal).toBe(i);
    expect(options.countTokens(chunk.text)).toBeLessThanOrEqual(options.maxTokens);
    expect(chunk.tokenCount).toBeLessThanOrEqual(options.maxTokens);
    expect(chunk.text.length).toBeGreaterThanOrEqual(options.minChars);
  });
}

/** The longest suffix of `a` that starts `b`. */
function sharedEdge(a: string, b: string): string {
  for (let length = Math.min(a.length, b.length); length > 0; length--) if (b.startsWith(a.slice(-length))) return a.slice(-length);
  return '';
}

describe('chunkDocument', () => {
  it('keeps every chunk within maxTokens by the real tokenizer and over minChars, counting exactly', () => {
    for (const doc of [pdfLike(12), manual]) {
      const chunks = chunkDocument(doc, OPTIONS);
      expectBounds(chunks);
      for (const chunk of chunks) expect(chunk.tokenCount).toBe(countTokens(chunk.text));
    }
  });

  it('overlaps consecutive chunks of one section by about overlapTokens, and not across headings', () => {
    const chunks = chunkDocument(pdfLike(6), OPTIONS);
    for (let i = 1; i < chunks.length; i++) {
      const overlap = sharedEdge(chunks[i - 1].text, chunks[i].text);
      expect(overlap.length, `chunk ${i}`).toBeGreaterThan(0);
      expect(countTokens(overlap)).toBeLessThanOrEqual(OPTIONS.overlapTokens);
      expect(countTokens(overlap)).toBeGreaterThanOrEqual(OPTIONS.overlapTokens / 4);
    }
    const sections = chunkDocument(manual, OPTIONS);
    const firstOfSafety = sections.findIndex((chunk) => chunk.heading === 'Safety');
    expect(sections[firstOfSafety].text.startsWith('Safety')).toBe(true);
    expect(sections[firstOfSafety - 1].heading).toBe('Introduction');
  });

  it('carries the page where a chunk starts and the nearest heading', () => {
    const doc = pdfLike(8);
    const chunks = chunkDocument(doc, OPTIONS);
    for (const chunk of chunks) {
      const firstLine = chunk.text.split('\n')[0];
      expect(doc.sections[chunk.page! - 1].text, `chunk ${chunk.ordinal}`).toContain(firstLine);
    }
    expect(chunks.find((chunk) => chunk.text.includes('page5.'))?.page).toBeLessThanOrEqual(5);
    const headed = chunkDocument(manual, OPTIONS);
    expect(headed.find((chunk) => chunk.text.includes('lifejacket'))?.heading).toBe('Safety');
    expect(headed.at(-1)).toMatchObject({ heading: 'Contacts', text: expect.stringContaining('channel 16') });
  });

  it('prefers paragraph breaks, then sentences, and never cuts a sentence that fits', () => {
    const chunks = chunkDocument(manual, OPTIONS);
    for (const chunk of chunks) expect(chunk.text).toMatch(/[.]$/);
  });

  it('splits a sentence longer than a chunk by words, and a word longer than a chunk by characters', () => {
    const run = Array.from({ length: 900 }, (_, i) => `word${i % 37}`).join(' ');
    const blob = 'QUJDRE'.repeat(2000);
    const chunks = chunkDocument({ sections: [{ kind: 'text', text: run }, { kind: 'text', heading: 'Blob', text: blob }] }, OPTIONS);
    expectBounds(chunks);
    expect(chunks.filter((chunk) => chunk.heading === 'Blob').map((chunk) => chunk.text).join('')).toContain(blob.slice(0, 500));
  });

  it('turns table rows into their own chunks, and folds rows shorter than minChars together', () => {
    const rows: ExtractedSection[] = [
      { kind: 'table-row', sheet: 'Sales', row: 2, text: 'Region: North; Quarter: Q1; Revenue: 1200; Notes: best quarter on record' },
      { kind: 'table-row', sheet: 'Sales', row: 3, text: 'Region: South; Quarter: Q1; Revenue: 950; Notes: storms closed the port' },
      { kind: 'table-row', sheet: 'Staff', row: 2, text: 'Name: Ada; Role: Engineer' },
      { kind: 'table-row', sheet: 'Staff', row: 3, text: 'Name: Grace; Role: Admiral' },
      { kind: 'table-row', sheet: 'Staff', row: 4, text: 'Name: Alan; Role: Analyst' },
    ];
    const chunks = chunkDocument({ sections: rows }, OPTIONS);
    expectBounds(chunks);
    expect(chunks.slice(0, 2)).toMatchObject([
      { sheet: 'Sales', row: 2, text: rows[0].text },
      { sheet: 'Sales', row: 3, text: rows[1].text },
    ]);
    expect(chunks[2]).toMatchObject({ sheet: 'Staff', row: 2 });
    expect(chunks.slice(2).map((chunk) => chunk.text).join('\n')).toContain('Name: Alan');
  });

  it('merges tiny fragments into something when their total reaches minChars, and drops less', () => {
    const fragments: ExtractedSection[] = Array.from({ length: 12 }, (_, i) => ({ kind: 'text', heading: `H${i}`, text: `Item ${i}.` }));
    const chunks = chunkDocument({ sections: fragments }, OPTIONS);
    expectBounds(chunks);
    expect(chunks.map((chunk) => chunk.text).join('\n\n')).toContain('Item 0.');
    expect(chunks.map((chunk) => chunk.text).join('\n\n')).toContain('Item 11.');
    expect(chunks[0].heading).toBe('H0');
    expect(chunkDocument({ sections: [{ kind: 'text', text: 'Too short.' }] }, OPTIONS)).toEqual([]);
  });

  it('stays within bounds with a tokenizer that is not additive over whitespace', () => {
    const lumpy = (text: string) => Math.ceil(text.length / 3) + (text.match(/\n/g)?.length ?? 0);
    const options = { ...OPTIONS, countTokens: lumpy };
    const chunks = chunkDocument(pdfLike(5), options);
    expectBounds(chunks, options);
    for (const chunk of chunks) expect(chunk.tokenCount).toBe(lumpy(chunk.text));
  });

  it('is deterministic: unchanged content gives identical chunks and ids, an edit only moves what follows it', () => {
    const ids = (doc: ExtractedDocument) => chunkDocument(doc, OPTIONS).map((chunk) => chunkId(DOC, chunk.ordinal, chunk.text));
    const before = ids(pdfLike(10));
    expect(ids(pdfLike(10))).toEqual(before);
    const edited = pdfLike(10);
    edited.sections[9] = { ...edited.sections[9], text: `${edited.sections[9].text} One more sentence.` };
    const after = ids(edited);
    expect(after.slice(0, 5)).toEqual(before.slice(0, 5));
    expect(after).not.toEqual(before);
  });

  // Tokenizing is the chunker's cost (its speed on real files: the ingest section of bench/run.ts): counted here, not timed.
  it('chunks a 200-page document giving the real tokenizer each distinct word once, and any other tokenizer under 3 characters per character', () => {
    const options = { ...OPTIONS, maxTokens: 256, overlapTokens: 32 };
    const doc = pdfLike(200);
    const given = new Map<string, number>();
    const chunks = chunkDocument(doc, { ...options, countTokens: (text) => (given.set(text, (given.get(text) ?? 0) + 1), countTokens(text)) });
    expect(chunks.at(-1)?.page).toBe(200);
    const words = new Set(doc.sections.flatMap((section) => section.text.split(/\s+/)));
    expect([...given].filter(([, times]) => times > 1)).toEqual([]);
    // Besides the words: the sample that tells whether the tokenizer adds up over whitespace, its last (cut) word, and a join probe.
    expect([...given.keys()].filter((text) => !words.has(text)).length).toBeLessThanOrEqual(3);

    const lumpy = (text: string) => Math.ceil(text.length / 3) + (text.match(/\n/g)?.length ?? 0); // not additive: chunks are counted whole
    for (const pages of [100, 200]) {
      const document = pdfLike(pages);
      let counted = 0;
      chunkDocument(document, { ...options, countTokens: (text) => ((counted += text.length), lumpy(text)) });
      const length = document.sections.reduce((sum, section) => sum + section.text.length, 0);
      expect(counted / length, `${pages} pages`).toBeLessThan(3);
    }
  });
});

describe('a section that starts a chunk of its own (boundary)', () => {
  it('keeps its flag through compactSection, so the chunker never joins it to the text before', () => {
    const before: ExtractedSection = { kind: 'text', text: 'Invoice 1001. The order was shipped on Monday and paid in full.' };
    const marked = compactSection({ kind: 'text', text: 'Invoice 1002. The second order waits for its payment.', boundary: true, heading: undefined });
    expect(marked).toEqual({ kind: 'text', text: 'Invoice 1002. The second order waits for its payment.', boundary: true });
    const chunks = (sections: ExtractedSection[]) => chunkDocument({ sections }, { ...OPTIONS, minChars: 10 }).map((chunk) => chunk.text);
    expect(chunks([before, marked])).toEqual([before.text, marked.text]);
    // Without the flag the two short sections share one chunk.
    expect(chunks([before, compactSection({ ...marked, boundary: false })])).toHaveLength(1);
  });
});

describe('chunkId', () => {
  it('is 32 hex characters derived from the document, its hash, the position and the text', () => {
    const id = chunkId(DOC, 0, 'hello');
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(chunkId(DOC, 0, 'hello')).toBe(id);
    expect(chunkId(DOC, 1, 'hello')).not.toBe(id);
    expect(chunkId(DOC, 0, 'hello!')).not.toBe(id);
    expect(chunkId({ ...DOC, sha256: 'b'.repeat(64) }, 0, 'hello')).not.toBe(id);
    // A copy of the same file (same bytes, another document) has ids of its own.
    expect(chunkId({ ...DOC, id: 'doc-2' }, 0, 'hello')).not.toBe(id);
  });
});
