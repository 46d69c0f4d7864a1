import { describe, expect, it } from 'vitest';
import { PatternError, RulePattern, translatePythonPattern } from './python-regex.js';

describe('Python patterns on RE2', () => {
  it('translates the Python syntax users paste', () => {
    expect(translatePythonPattern('(?P<dept>\\w+)\\Z')).toEqual({ source: '(?P<dept>\\w+)\\z', groups: 1 });
    expect(translatePythonPattern('(?i)(?s)a(.)')).toEqual({ source: '(?is)a(.)', groups: 1 });
    expect(translatePythonPattern('(?x) a \\  (b) # note\n c [ ]')).toEqual({ source: 'a\\ (b)c[ ]', groups: 1 });
    expect(translatePythonPattern('(?i:a)(?#comment)(\\u00e9)')).toEqual({ source: '(?i:a)(\\x{00e9})', groups: 1 });
    expect(translatePythonPattern('[]a(](b)').groups).toBe(1);
  });

  it('refuses what RE2 cannot run, with the position', () => {
    const refused = (pattern: string) => {
      try {
        new RulePattern(pattern);
      } catch (error) {
        expect(error).toBeInstanceOf(PatternError);
        return [(error as PatternError).position, (error as Error).message];
      }
      throw new Error(`${pattern} was accepted`);
    };
    expect(refused('ab(c)\\2')).toEqual([5, expect.stringMatching(/backreferences/)]);
    expect(refused('(?=x)(y)')[0]).toBe(0);
    expect(refused('x(?<=y)(z)')[0]).toBe(1);
    expect(refused('(?>x)(y)')[1]).toMatch(/atomic/);
    expect(refused('(x)(?(1)a|b)')[1]).toMatch(/conditional/);
    expect(refused('(\\N{DASH})')[1]).toMatch(/named characters/);
    expect(refused('[abc(d)')[1]).toMatch(/never closed/);
    expect(refused('x')[1]).toMatch(/has 0/);
  });

  it('finds matches with the captured value, stepping over empty matches', () => {
    const pattern = new RulePattern('(\\d*)');
    expect(pattern.all('a1', 5).map((m) => [m.start, m.end, m.value])).toEqual([[0, 0, ''], [1, 2, '1'], [2, 2, '']]);
    expect(new RulePattern('id=(\\w+)').first('x id=42 id=7')).toMatchObject({ start: 2, end: 7, value: '42', valueStart: 5, valueEnd: 7 });
  });
});
