import { describe, expect, it } from 'vitest';
import { shippedEmbedderForSuite } from '../../test/fixtures/shipped-embedder.js';
import type { SourceView } from '../conversations/index.js';
import { EXTRACTIVE_SETTINGS, EXTRACTIVE_WORDS, extractiveQuotes, quoteEmbedder, quoteWordTable } from './extractive.js';

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

  it('brings along what a quoted sentence introduces (a colon, "e.g.,"), past a blank line, within its passage only', async () => {
    const ttl = source(1, 'Tokens expire after one hour. A longer lifetime can be set per realm, e.g.,\n\nvaultctl ttl 86400\n\nNothing else is kept.');
    const alone = { ...EXTRACTIVE_SETTINGS, neighbours: { after: 0, before: 0 } };
    expect((await extractiveQuotes('Can a longer lifetime be set per realm?', [ttl], null, alone)).map((quote) => quote.text)).toEqual(['A longer lifetime can be set per realm, e.g.,\n\nvaultctl ttl 86400']);
    const steps = source(1, 'To rotate the signing key of a realm:\n\nvaultctl rotate\n\nvaultctl reload');
    expect((await extractiveQuotes('How do I rotate the signing key of a realm?', [steps], null, alone)).map((quote) => quote.text)).toEqual(['To rotate the signing key of a realm:\n\nvaultctl rotate']);
    // A passage that ends introducing: what follows is another passage, not brought along.
    const [first, second] = [source(1, 'To rotate the signing key of a realm:'), source(2, 'vaultctl rotate')];
    expect((await extractiveQuotes('How do I rotate the signing key of a realm?', [first, second], null, alone)).map((quote) => quote.text)).toEqual(['To rotate the signing key of a realm:']);
  });

  it("brings a quoted sentence's neighbours in its block along (two after, one before), not those of another block", async () => {
    const retries = source(
      1,
      'The client reads its settings at start. The retry option is called backoff. It takes a count of attempts. It defaults to five. It never waits longer than a minute.\n\nLogging is configured elsewhere.',
    );
    const quotes = await extractiveQuotes('What is the retry option called?', [retries], null);
    expect(quotes.map((quote) => quote.text)).toEqual(['The client reads its settings at start. The retry option is called backoff. It takes a count of attempts. It defaults to five.']);
  });

  it('quotes the item a reference list defines for the term the question names (an exit code), which shares no other word with it', async () => {
    const exits = source(
      1,
      [
        'EXIT VALUES',
        'The userdel command exits with the following values:',
        '',
        '0',
        'success',
        '',
        '6',
        "specified user doesn't exist",
        '',
        '8',
        'user currently logged in',
      ].join('\n'),
    );
    const question = 'What does it mean when userdel exits with status 8?';
    const quoted = async (settings = EXTRACTIVE_SETTINGS) => (await extractiveQuotes(question, [exits, PROSE], null, settings)).map((quote) => quote.text).join('\n');
    expect(await quoted()).toContain('8\nuser currently logged in');
    expect(await quoted()).not.toContain("specified user doesn't exist");
    // Without the term's bonus the keyword arm alone finds nothing of the item.
    expect(await quoted({ ...EXTRACTIVE_SETTINGS, termBonus: 0 })).not.toContain('user currently logged in');
  });

  it('takes a term in capitals (a section heading, a variable) as asked for only when the question writes it in capitals', async () => {
    const page = source(1, 'FILES\nNothing else is consulted at start.\n\nThe files are listed by the index command.');
    // One sentence fits: the first taken shows which one ranks first.
    const settings = { ...EXTRACTIVE_SETTINGS, words: 8, termBonus: 5, neighbours: { after: 0, before: 0 } };
    expect((await extractiveQuotes('Which files are listed?', [page], null, settings)).map((quote) => quote.text)).toEqual(['The files are listed by the index command.']);
    expect((await extractiveQuotes('What is in FILES?', [page], null, settings)).map((quote) => quote.text)).toEqual(['FILES\nNothing else is consulted at start.']);
  });

  it("keeps a wrapped line that starts with an option inside its sentence, while an option list's lines stay blocks of their own", async () => {
    const page = source(1, '--full-name\nShow full path names.\n\n--full-tree\nDo not limit the listing to the current directory. Implies\n--full-name.\n\nSEE ALSO\ngit(1)');
    const quotes = await extractiveQuotes('What does the --full-tree option do?', [page], null);
    expect(quotes.map((quote) => quote.text).join('\n')).toContain('--full-tree\nDo not limit the listing to the current directory. Implies\n--full-name.');
    // The option list of TAR: each line its own block, so the -C line is quoted without its neighbours' lines.
    const tar = (await extractiveQuotes('Which tar option extracts into another directory?', [TAR], null, { ...EXTRACTIVE_SETTINGS, neighbours: { after: 0, before: 0 } })).map((quote) => quote.text);
    expect(tar).toContain('-C, --directory=DIR    change to directory DIR before extracting');
  });

  it('answers on the keyword arm alone when the embedder fails', async () => {
    const question = 'Which tar option extracts into another directory?';
    const busy = async (): Promise<Float32Array[]> => {
      throw new Error('embedder busy');
    };
    const failing = { embed: busy, embedWords: busy };
    expect(await extractiveQuotes(question, [TAR, PROSE], failing)).toEqual(await extractiveQuotes(question, [TAR, PROSE], null));
  });
});

describe('extractiveQuotes with the shipped Model2Vec embedder (for real): soft term matching', () => {
  const shipped = shippedEmbedderForSuite();

  const BUILD = source(1, 'The build reads its settings from a file. Parallel jobs can be run with -j to finish faster. The build stops at the first error.');
  const ONE_SENTENCE = { ...EXTRACTIVE_SETTINGS, words: 10, neighbours: { after: 0, before: 0 } };
  const first = async (tokenTable: boolean, settings = ONE_SENTENCE) => {
    const embedder = shipped();
    const quoting = quoteEmbedder(tokenTable ? embedder : { ...embedder, embed: embedder.embed.bind(embedder), tokenTable: false }, quoteWordTable());
    return (await extractiveQuotes('How do I speed up the build?', [BUILD], quoting, settings))[0].text;
  };

  it('quotes the line that answers a paraphrase word by word ("speed up" meets "faster"), where the sentence vectors and the shared word pick another', async () => {
    expect(await first(true)).toBe('Parallel jobs can be run with -j to finish faster.');
    expect(await first(true, { ...ONE_SENTENCE, softShare: 0 })).toBe('The build reads its settings from a file.');
  });

  it('runs only for a token-table embedder (an ONNX model would embed each word alone)', async () => {
    expect(await first(false)).toBe('The build reads its settings from a file.');
  });
});
