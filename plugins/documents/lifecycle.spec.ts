import { describe, expect, it } from 'vitest';
import { CANCELLED_REASON, UNEXPECTED_REASON, needsIndexing, statesBefore } from './lifecycle.js';

describe('the document lifecycle', () => {
  it('lets only indexing end indexed, and a document fail only on its way to the index', () => {
    expect(statesBefore('indexed')).toEqual(['indexing']);
    expect(statesBefore('failed').sort()).toEqual(['indexing', 'queued']);
  });

  it('queues again from any state, and starts indexing from any (after a crash, or an unchanged document)', () => {
    expect(statesBefore('queued').sort()).toEqual(['failed', 'indexed', 'indexing', 'queued']);
    expect(statesBefore('indexing').sort()).toEqual(['failed', 'indexed', 'indexing', 'queued']);
  });

  it('indexes an unchanged document again only when it failed for a reason outside the file, or never finished', () => {
    expect(needsIndexing({ status: 'queued', error: null })).toBe(true);
    expect(needsIndexing({ status: 'indexing', error: null })).toBe(true);
    expect(needsIndexing({ status: 'indexed', error: null })).toBe(false);
    expect(needsIndexing({ status: 'failed', error: CANCELLED_REASON })).toBe(true);
    expect(needsIndexing({ status: 'failed', error: UNEXPECTED_REASON })).toBe(true);
    expect(needsIndexing({ status: 'failed', error: 'The PDF is encrypted' })).toBe(false);
  });
});
