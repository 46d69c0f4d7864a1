import { describe, expect, it } from 'vitest';
import { termCoverage, termWeight } from './keyword-query.js';

describe('termCoverage (how much of the question a passage holds)', () => {
  const terms = [
    { term: 'extracts', df: 40 },
    { term: 'directory', df: 900 },
    { term: 'archive', df: 120 },
  ];
  const chunks = 20_000;
  const weight = (df: number) => termWeight(df, chunks);

  it('is 1 for a passage holding every term, in another form of the word (as the keyword index stems it)', () => {
    expect(termCoverage(terms, 'Extracting files from an archive into another directory.', chunks)).toBe(1);
    expect(termCoverage(terms, 'ARCHIVES: extracted into DIRECTORIES', chunks)).toBe(1);
    expect(termCoverage([{ term: 'compression', df: 3 }], 'compress it', chunks)).toBe(1);
  });

  it('weighs each term by its rarity: a rare term missing costs more than a common one', () => {
    const withoutRare = termCoverage(terms, 'change to the archive directory', chunks);
    const withoutCommon = termCoverage(terms, 'extract the archive', chunks);
    const total = weight(40) + weight(900) + weight(120);
    expect(withoutRare).toBeCloseTo((weight(900) + weight(120)) / total, 12);
    expect(withoutCommon).toBeCloseTo((weight(40) + weight(120)) / total, 12);
    expect(withoutCommon).toBeGreaterThan(withoutRare);
  });

  it('is 0 for a paraphrase that shares no word, and for no terms; a term no chunk holds weighs as if one did', () => {
    expect(termCoverage(terms, 'unpack the tarball elsewhere', chunks)).toBe(0);
    expect(termCoverage([], 'anything', chunks)).toBe(0);
    const unseen = [{ term: 'tarball', df: 0 }, { term: 'archive', df: 120 }];
    expect(termCoverage(unseen, 'the archive', chunks)).toBeCloseTo(weight(120) / (weight(1) + weight(120)), 12);
  });

  it('matches whole words only: a term inside a longer word does not count', () => {
    expect(termCoverage([{ term: 'tar', df: 5 }], 'the tarball and the star', chunks)).toBe(0);
  });
});
