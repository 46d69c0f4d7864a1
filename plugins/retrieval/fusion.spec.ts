import { describe, expect, it } from 'vitest';
import { DEFAULT_FUSION, capPerDocument, fuse } from './fusion.js';

describe('fuse (default settings)', () => {
  it('puts a chunk the keyword list ranks first above one the vector list alone ranks first', () => {
    // rowid 1 is first in the vector list only, rowid 2 first in the keyword list only: equal weights tie them (and the lower rowid wins).
    const fused = fuse([{ rowid: 1, score: 0.9 }], [{ rowid: 2, score: 12 }], DEFAULT_FUSION);
    expect(fused.map((item) => item.rowid)).toEqual([2, 1]);
  });

  it('still lets agreement of both lists win over the top of one list', () => {
    const fused = fuse([{ rowid: 1, score: 0.9 }, { rowid: 3, score: 0.8 }], [{ rowid: 2, score: 12 }, { rowid: 3, score: 11 }], DEFAULT_FUSION);
    expect(fused[0].rowid).toBe(3);
  });
});

describe('capPerDocument', () => {
  it("moves a document's chunks past the cap behind the other documents' chunks, dropping none", () => {
    const items = [{ id: 1, doc: 'a' }, { id: 2, doc: 'a' }, { id: 3, doc: 'b' }, { id: 4, doc: 'a' }, { id: 5, doc: 'c' }];
    expect(capPerDocument(items, (item) => item.doc, 1).map((item) => item.id)).toEqual([1, 3, 5, 2, 4]);
    expect(capPerDocument(items, (item) => item.doc, 2).map((item) => item.id)).toEqual([1, 2, 3, 5, 4]);
    expect(capPerDocument(items, (item) => item.doc, 0)).toBe(items);
  });
});
