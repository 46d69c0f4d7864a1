import { describe, expect, it } from 'vitest';
import { CHAT_KEYWORD_CONFIDENCE, DEFAULT_FUSION, SOFT_PASSAGE_WEIGHT, capPerDocument, documentLead, fuse, keywordConfident, passageScore, passagesInPlace, withDocumentRanking, withKeywordConfidence, withSoftMatch, withSoftPassages } from './fusion.js';

describe('fuse (default settings)', () => {
  it('weighs the vector list 2.5 and the keyword list of chunks 2: the first of the vector list wins over the first of the keyword list', () => {
    // rowid 2 is first in the vector list only, rowid 1 first in the keyword list only.
    const fused = fuse([{ rowid: 2, score: 0.9 }], [{ rowid: 1, score: 12 }], DEFAULT_FUSION);
    expect(fused.map((item) => item.rowid)).toEqual([2, 1]);
    expect(fused[0].score).toBeCloseTo(1.25 * fused[1].score, 12);
  });

  it("puts the keyword list's first chunk ninth among 20 chunks only the vector list found (after all of them at session 20's weights)", () => {
    // A question in a document's own words: bm25 finds the chunk holding them, the vector list prefers other documents.
    const vector = Array.from({ length: 20 }, (_, i) => ({ rowid: 100 + i, score: 0.9 - i * 0.01 }));
    const placeOf = (settings: typeof DEFAULT_FUSION) => fuse(vector, [{ rowid: 1, score: 12 }], settings).findIndex((item) => item.rowid === 1);
    // 2 / 31 lies between the vector list's eighth and ninth places, 2.5 / 38 and 2.5 / 39.
    expect(placeOf(DEFAULT_FUSION)).toBe(8);
    expect(placeOf({ ...DEFAULT_FUSION, weights: { ...DEFAULT_FUSION.weights, vector: 3, keyword: 1 } })).toBe(20);
  });

  it("puts that chunk first when it holds the question's words (keywordConfidence: the keyword list weighs 16 there)", () => {
    const vector = Array.from({ length: 20 }, (_, i) => ({ rowid: 100 + i, score: 0.9 - i * 0.01 }));
    const placeAt = (coverage: number) => fuse(vector, [{ rowid: 1, score: 12 }], withKeywordConfidence(DEFAULT_FUSION, coverage)).findIndex((item) => item.rowid === 1);
    expect(DEFAULT_FUSION.keywordConfidence).toEqual({ coverage: 0.6, weight: 16, passages: 8 });
    expect(CHAT_KEYWORD_CONFIDENCE).toEqual({ coverage: 0.6, weight: 16, passages: 1 });
    expect(placeAt(1)).toBe(0);
    expect(placeAt(0.6)).toBe(0);
    // Below the coverage the search's own weights stand: ninth, as above.
    expect(placeAt(0.59)).toBe(8);
    expect(placeAt(0)).toBe(8);
  });

  it('withKeywordConfidence raises only the keyword weight, only for RRF, and never lowers one already higher', () => {
    const confident = withKeywordConfidence(DEFAULT_FUSION, 0.9);
    expect(confident.weights).toEqual({ ...DEFAULT_FUSION.weights, keyword: 16 });
    expect(DEFAULT_FUSION.weights.keyword).toBe(2); // the defaults are not changed in place
    expect(withKeywordConfidence(DEFAULT_FUSION, 0.5)).toBe(DEFAULT_FUSION);
    const weighted = { ...DEFAULT_FUSION, method: 'weighted' as const };
    expect(withKeywordConfidence(weighted, 1)).toBe(weighted);
    const heavy = { ...DEFAULT_FUSION, weights: { ...DEFAULT_FUSION.weights, keyword: 20 } };
    expect(withKeywordConfidence(heavy, 1)).toBe(heavy);
    const never = { ...DEFAULT_FUSION, keywordConfidence: { ...DEFAULT_FUSION.keywordConfidence, coverage: 2 } };
    expect(withKeywordConfidence(never, 1)).toBe(never);
    expect(withKeywordConfidence(DEFAULT_FUSION, null)).toBe(DEFAULT_FUSION);
    expect([keywordConfident(DEFAULT_FUSION, 0.6), keywordConfident(DEFAULT_FUSION, 0.59), keywordConfident(DEFAULT_FUSION, null), keywordConfident(weighted, 1)]).toEqual([true, false, false, false]);
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

describe('withDocumentRanking (the whole-document keyword ranking as a third list)', () => {
  const documentOf = (rowid: number) => ({ 1: 'a', 2: 'a', 3: 'b', 4: 'c' })[rowid]!;
  const rrf = (rank: number) => 1 / (DEFAULT_FUSION.rrfK + rank);

  const noLead = { ...DEFAULT_FUSION, documentConfidence: 0 };

  it("lifts every candidate chunk of a ranked document by its document's place, weighed as its own list", () => {
    const fused = [{ rowid: 4, score: 0.05 }, { rowid: 1, score: 0.04 }, { rowid: 2, score: 0.03 }];
    const ranked = withDocumentRanking(fused, [{ document_id: 'a', score: 9 }], documentOf, noLead);
    const gain = DEFAULT_FUSION.weights.document * rrf(1);
    expect(ranked).toEqual([{ rowid: 1, score: 0.04 + gain }, { rowid: 2, score: 0.03 + gain }, { rowid: 4, score: 0.05 }]);
  });

  it('gives a ranked document none of whose chunks is a candidate a place of its own, for its best chunk to fill', () => {
    const fused = [{ rowid: 4, score: 0.01 }];
    const ranked = withDocumentRanking(fused, [{ document_id: 'c', score: 9 }, { document_id: 'b', score: 5 }], documentOf, noLead);
    expect(ranked).toEqual([{ rowid: 4, score: 0.01 + DEFAULT_FUSION.weights.document * rrf(1) }, { document: 'b', score: DEFAULT_FUSION.weights.document * rrf(2) }]);
  });

  it("lifts the first document's place by its lead over the second (documentConfidence): its best chunk only", () => {
    expect(documentLead([{ score: 9 }, { score: 3 }])).toBeCloseTo(2 / 3, 12);
    expect(documentLead([{ score: 9 }])).toBe(1);
    expect(documentLead([{ score: 4 }, { score: 4 }])).toBe(0);
    expect(documentLead([])).toBe(0);
    const { document } = DEFAULT_FUSION.weights;
    const extra = document * rrf(1) * DEFAULT_FUSION.documentConfidence * (2 / 3);
    // Document a leads b by two thirds: its best chunk (rowid 1) gains the extra, its second chunk (rowid 2) does not.
    const fused = [{ rowid: 1, score: 0.04 }, { rowid: 3, score: 0.035 }, { rowid: 2, score: 0.03 }];
    const ranked = withDocumentRanking(fused, [{ document_id: 'a', score: 9 }, { document_id: 'b', score: 3 }], documentOf, DEFAULT_FUSION);
    expect(ranked).toEqual([{ rowid: 1, score: 0.04 + document * rrf(1) + extra }, { rowid: 3, score: 0.035 + document * rrf(2) }, { rowid: 2, score: 0.03 + document * rrf(1) }]);
    // A leading document with no candidate chunk: its own place gains it.
    const placed = withDocumentRanking([{ rowid: 3, score: 0.01 }], [{ document_id: 'c', score: 9 }, { document_id: 'b', score: 3 }], documentOf, DEFAULT_FUSION);
    expect(placed).toEqual([{ document: 'c', score: document * rrf(1) + extra }, { rowid: 3, score: 0.01 + document * rrf(2) }]);
    // Two documents alike: no lead, nothing more than their places.
    const even = withDocumentRanking(fused, [{ document_id: 'a', score: 4 }, { document_id: 'b', score: 4 }], documentOf, DEFAULT_FUSION);
    expect(even[0]).toEqual({ rowid: 1, score: 0.04 + document * rrf(1) });
  });

  it('adds nothing with weight 0 but the places of unmatched documents, which then rank last', () => {
    const settings = { ...DEFAULT_FUSION, weights: { ...DEFAULT_FUSION.weights, document: 0 } };
    const fused = [{ rowid: 1, score: 0.02 }, { rowid: 4, score: 0.01 }];
    expect(withDocumentRanking(fused, [{ document_id: 'c', score: 3 }, { document_id: 'b', score: 1 }], documentOf, settings)).toEqual([...fused, { document: 'b', score: 0 }]);
  });
});

describe('passagesInPlace (which passage of a document comes first)', () => {
  const documentOf = (item: { rowid: number }) => ({ 1: 'a', 2: 'a', 3: 'b', 4: 'a', 5: 'c' })[item.rowid]!;
  const ranked = [
    { rowid: 2, score: 0.5 },
    { rowid: 3, score: 0.4 },
    { rowid: 1, score: 0.3 },
    { rowid: 5, score: 0.2 },
    { rowid: 4, score: 0.1 },
  ];

  it("reorders a document's chunks among its own places by passage score, each taking its place's score", () => {
    const passage = new Map([[1, 0.06], [2, 0.03], [4, 0.05], [3, 0], [5, 0]]);
    const placed = passagesInPlace(ranked, documentOf, (item) => passage.get(item.rowid)!);
    // Document a held places 1, 3 and 5: now 1 (0.06), 4 (0.05), 2 (0.03) hold them; b and c keep theirs.
    expect(placed.map((item) => item.rowid)).toEqual([1, 3, 4, 5, 2]);
    expect(placed.map((item) => item.score)).toEqual([0.5, 0.4, 0.3, 0.2, 0.1]);
  });

  it('changes nothing when the passage scores agree with the order, and keeps the order on a tie', () => {
    expect(passagesInPlace(ranked, documentOf, () => 0)).toEqual(ranked);
    const agree = new Map([[2, 3], [1, 2], [4, 1], [3, 0], [5, 0]]);
    expect(passagesInPlace(ranked, documentOf, (item) => agree.get(item.rowid)!)).toEqual(ranked);
  });

  it('passageScore sums the reciprocal ranks of both chunk lists at equal weights', () => {
    const passage = passageScore([{ rowid: 1, score: 0.9 }, { rowid: 2, score: 0.8 }], [{ rowid: 2, score: 12 }], 30);
    expect(passage({ rowid: 1, score: 0 })).toBeCloseTo(1 / 31, 12);
    expect(passage({ rowid: 2, score: 0 })).toBeCloseTo(1 / 32 + 1 / 31, 12);
    expect(passage({ rowid: 9, score: 0 })).toBe(0);
  });

  it("weighs the keyword list as asked (keywordConfidence.passages): a question in a passage's own words shows that passage", () => {
    // Chunks 1 and 2 of one document: the vector list prefers 1, the keyword list has 2 (holding the question's words) first.
    const vector = [{ rowid: 1, score: 0.9 }, { rowid: 5, score: 0.85 }, { rowid: 6, score: 0.84 }, { rowid: 2, score: 0.8 }];
    const keyword = [{ rowid: 2, score: 12 }, { rowid: 1, score: 3 }];
    const items = [{ rowid: 1, score: 0.5 }, { rowid: 2, score: 0.4 }];
    const shown = (weight: number) => passagesInPlace(items, () => 'doc', passageScore(vector, keyword, 30, [], weight))[0].rowid;
    expect(shown(1)).toBe(1);
    expect(shown(DEFAULT_FUSION.keywordConfidence.passages)).toBe(2);
    const passage = passageScore(vector, keyword, 30, [], 8);
    expect(passage({ rowid: 2, score: 0 })).toBeCloseTo(1 / 34 + 8 / 31, 12);
  });

  it("with soft matching's best chunks, adds their own ranking at SOFT_PASSAGE_WEIGHT: a chunk only it found can lead its document", () => {
    const passage = passageScore([{ rowid: 1, score: 0.9 }], [{ rowid: 1, score: 12 }], 30, [{ rowid: 4, score: 0.8 }, { rowid: 1, score: 0.5 }]);
    expect(passage({ rowid: 4, score: 0 })).toBeCloseTo(SOFT_PASSAGE_WEIGHT / 31, 12);
    expect(passage({ rowid: 1, score: 0 })).toBeCloseTo(2 / 31 + SOFT_PASSAGE_WEIGHT / 32, 12);
    const placed = passagesInPlace(withSoftPassages(ranked, [{ rowid: 6, score: 0.9 }], (item) => (item.rowid === 6 ? 'a' : documentOf(item))), (item) => (item.rowid === 6 ? 'a' : documentOf(item)), (item) => (item.rowid === 6 ? 1 : 0));
    // Chunk 6 of document a, found by neither list, takes a's first place; a's other chunks move down its places, the last one below every other.
    expect(placed.map((item) => item.rowid)).toEqual([6, 3, 2, 5, 1, 4]);
    expect(placed[0].score).toBe(0.5);
  });
});

describe("withSoftPassages (soft matching's best chunks as chunks of their documents)", () => {
  const documentOf = (item: { rowid: number }) => ({ 1: 'a', 2: 'b', 3: 'a', 4: 'c', 5: 'b' })[item.rowid]!;
  const items = [
    { rowid: 1, score: 0.4 },
    { rowid: 2, score: 0.2 },
  ];

  it('adds a chunk of a ranked document at half the lowest score, once; not one already there, nor one of a document not ranked', () => {
    expect(withSoftPassages(items, [{ rowid: 3, score: 0.9 }, { rowid: 4, score: 0.8 }, { rowid: 1, score: 0.7 }, { rowid: 5, score: 0.6 }], documentOf)).toEqual([...items, { rowid: 3, score: 0.1 }, { rowid: 5, score: 0.1 }]);
  });

  it('changes nothing without soft passages or candidates', () => {
    expect(withSoftPassages(items, [], documentOf)).toBe(items);
    expect(withSoftPassages([], [{ rowid: 3, score: 1 }], documentOf)).toEqual([]);
  });
});

describe('withSoftMatch (soft term matching as one more list)', () => {
  it('a candidate its ranking puts first gains the most, ties keep their order', () => {
    const settings = { ...DEFAULT_FUSION, weights: { ...DEFAULT_FUSION.weights, soft: 7 } };
    const items = [
      { rowid: 1, score: 0.2 },
      { rowid: 2, score: 0.199 },
      { rowid: 3, score: 0.198 },
    ];
    const soft = new Map([[3, 0.9], [1, 0.1], [2, 0.1]]);
    const out = withSoftMatch(items, (item) => soft.get(item.rowid)!, settings);
    expect(out.map((item) => item.rowid)).toEqual([3, 1, 2]);
    expect(out[0].score).toBeCloseTo(0.198 + 7 / 31);
    expect(out[1].score).toBeCloseTo(0.2 + 7 / 32);
  });
});

