import { describe, expect, it } from 'vitest';
import type { SourceView } from '../conversations/index.js';
import { EXTRACTIVE_SETTINGS, EXTRACTIVE_WORDS, extractiveQuotes } from './extractive.js';

const source = (marker: number, text: string): SourceView => ({ marker, chunk_id: `c${marker}`, document_id: `d${marker}`, filename: `f${marker}.md`, score: 1, text });

const TAR = source(
  1,
  [
    'Options:',
    '-x, --extract    extract files from an archive',
    '-v, --verbose    list the files processed',
    '-C, --directory=DIR    change to directory DIR before extracting',
    '-f, --file=ARCHIVE    use archive file ARCHIVE',
  ].join('\n'),
);
const PROSE = source(
  2,
  'The archive format dates from the tape era. It stores files one after another. ' +
    'Tapes were slow, so the format avoids seeking. Modern tools still read it. Extracting into another folder is done with the directory option.',
);

describe('extractiveQuotes', () => {
  it('quotes the line that answers, not the whole passage, with its source', async () => {
    const quotes = await extractiveQuotes('Which tar option extracts into another directory?', [TAR, PROSE], null);
    const text = quotes.map((quote) => quote.text).join('\n');
    expect(text).toContain('-C, --directory=DIR    change to directory DIR before extracting');
    expect(quotes.find((quote) => quote.text.includes('--directory'))!.source).toBe(TAR);
    expect(text).not.toContain('Tapes were slow');
  });

  it('stays near the word budget and leaves out a sentence that repeats one already quoted', async () => {
    const long = source(1, Array.from({ length: 40 }, (_, i) => `Lantern fact number ${i} says the copper lantern burns oil ${i} hours.`).join(' '));
    const copy = source(2, 'Lantern fact number 0 says the copper lantern burns oil 0 hours.');
    const quotes = await extractiveQuotes('How long does the copper lantern burn oil?', [long, copy], null);
    const words = quotes.reduce((sum, quote) => sum + quote.text.split(/\s+/).length, 0);
    expect(words).toBeLessThanOrEqual(EXTRACTIVE_WORDS * 1.2);
    expect(quotes.some((quote) => quote.source === copy)).toBe(false);
  });

  it('quotes neighbouring sentences of one passage as one quote, in the passage order', async () => {
    const quotes = await extractiveQuotes('copper lantern pier storm', [source(1, 'The copper lantern stands on the pier. A storm cracked the lantern glass. Gulls nest nearby.')], null);
    expect(quotes[0].text.startsWith('The copper lantern stands on the pier. A storm cracked the lantern glass.')).toBe(true);
  });

  it('does not cut a sentence after an initial or an abbreviation', async () => {
    const smart = source(1, 'Disks are listed first. To detect S.M.A.R.T. status on Linux you need to install smartmontools, e.g. from the package manager. Temperatures come later.');
    // Sentences alone (no neighbours brought along), so that the cut itself shows.
    const quotes = await extractiveQuotes('What do I need to install to detect SMART status on Linux?', [smart], null, { ...EXTRACTIVE_SETTINGS, neighbours: { after: 0, before: 0 } });
    expect(quotes.map((quote) => quote.text)).toContain('To detect S.M.A.R.T. status on Linux you need to install smartmontools, e.g. from the package manager.');
  });

  it("brings a quoted sentence's neighbours in its block along (two after, one before), not those of another block", async () => {
    const retries = source(
      1,
      'The client reads its settings at start. The retry option is called backoff. It takes a count of attempts. It defaults to five. It never waits longer than a minute.\n\nLogging is configured elsewhere.',
    );
    const quotes = await extractiveQuotes('What is the retry option called?', [retries], null);
    expect(quotes.map((quote) => quote.text)).toEqual(['The client reads its settings at start. The retry option is called backoff. It takes a count of attempts. It defaults to five.']);
  });

  it('answers on the keyword arm alone when the embedder fails', async () => {
    const question = 'Which tar option extracts into another directory?';
    const failing = async (): Promise<Float32Array[]> => {
      throw new Error('embedder busy');
    };
    expect(await extractiveQuotes(question, [TAR, PROSE], failing)).toEqual(await extractiveQuotes(question, [TAR, PROSE], null));
  });
});
