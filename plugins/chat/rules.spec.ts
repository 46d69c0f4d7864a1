import { describe, expect, it } from 'vitest';
import { classifyByRules, metadataHints } from './classifier.js';
import { MarkerFilter, keepValidMarkers, stripMarkers } from './markers.js';
import { isFollowUp, withPreviousTerms } from './rewrite.js';

describe('citation markers', () => {
  const text = 'Replaced in 1987 [1] after a storm [4]. Paid [1, 3] [2,9] from the fund [12]; see [appendix] and [2]';

  it('keeps markers that point at a source and removes the others with their space', () => {
    expect(keepValidMarkers(text, 3)).toBe('Replaced in 1987 [1] after a storm. Paid [1, 3] [2] from the fund; see [appendix] and [2]');
    expect(keepValidMarkers(text, 0)).toBe('Replaced in 1987 after a storm. Paid from the fund; see [appendix] and');
    expect(stripMarkers('A [1] b [2, 3].')).toBe('A b.');
  });

  it('gives the same text however the stream cuts it, holding an open "[12" until it closes', () => {
    const expected = keepValidMarkers(text, 3);
    for (let cut = 0; cut <= text.length; cut++) {
      for (const size of [1, 2, 3, 7]) {
        const filter = new MarkerFilter(3);
        const pieces = [text.slice(0, cut), ...(text.slice(cut).match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [])];
        const out = pieces.map((piece) => filter.push(piece)).join('') + filter.flush();
        expect(out, `cut ${cut} size ${size}`).toBe(expected);
      }
    }
    const filter = new MarkerFilter(3);
    expect(filter.push('storm [1')).toBe('storm');
    expect(filter.push('2] ok')).toBe(' ok');
    expect(filter.push(' end [1')).toBe(' end');
    expect(filter.flush()).toBe(' [1');
  });
});

describe('query classifier (rules)', () => {
  it.each([
    ['Hello!', 'small_talk'],
    ['good morning', 'small_talk'],
    ['Thanks a lot!', 'small_talk'],
    ['ok thanks', 'small_talk'],
    ['bye', 'small_talk'],
    ['What can you do?', 'small_talk'],
    ['Hi, what is the budget for 2023?', 'metadata'],
    ['What does budget.pdf say about roads?', 'metadata'],
    ['summarise "Annual Report.docx"', 'metadata'],
    ['spending between 2019 and 2021', 'metadata'],
    ['Who replaced the copper lantern?', 'document'],
    ['lantern', 'document'],
  ])('%s → %s', (query, kind) => {
    expect(classifyByRules(query).kind).toBe(kind);
  });

  it('marks short remarks without a question as ambiguous', () => {
    expect(classifyByRules('hmm interesting')).toMatchObject({ kind: 'document', ambiguous: true });
    expect(classifyByRules('Who paid?')).toMatchObject({ kind: 'document', ambiguous: false });
  });

  it('reads file names and year ranges as metadata hints', () => {
    expect(metadataHints('in budget-2023.pdf and "Q1 Notes.md"')).toEqual({ filenames: ['q1 notes.md', 'budget-2023.pdf'], years: { from: 2023, to: 2023 } });
    expect(metadataHints('from 2018 to 2016')?.years).toEqual({ from: 2016, to: 2018 });
    expect(metadataHints('sales 2019-2021')?.years).toEqual({ from: 2019, to: 2021 });
    expect(metadataHints('since 2020')?.years).toEqual({ from: 2020, to: null });
    expect(metadataHints('before 2020')?.years).toEqual({ from: null, to: 2019 });
    expect(metadataHints('what is node.js?')).toBeNull();
  });
});

describe('follow-up rewriting without a model', () => {
  it('detects follow-ups and adds the previous questions\' key terms', () => {
    expect(isFollowUp('and the second one?')).toBe(true);
    expect(isFollowUp('who paid for it?')).toBe(true);
    expect(isFollowUp('How many apple trees grow in the orchard?')).toBe(false);
    const turns = [{ query: 'How deep is the harbour basin?', answer: '' }, { query: 'When was the copper lantern replaced?', answer: '' }];
    expect(withPreviousTerms('and who paid for it?', turns)).toBe('and who paid for it? replaced lantern copper harbour basin deep');
    expect(withPreviousTerms('the lantern', turns.slice(1))).toBe('the lantern replaced copper');
  });
});
