import { RE2 } from 're2-wasm';
import { BoundedMap } from '../../core/bounded-map.js';

/**
 * Metadata rules are written as Python regular expressions (what users paste) and run on RE2, whose
 * matching time is linear in the text: no pattern can backtrack catastrophically. This file turns the
 * Python syntax RE2 lacks into its equivalent, and refuses what has none, with the reason and position.
 */

/** Characters of text one match call reads at most: a longer text is matched on its first part. */
export const MAX_MATCH_TEXT = 1_000_000;

/** A pattern that cannot be used; `position` is the 0-based character offset in the pattern, when one is to blame. */
export class PatternError extends Error {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(position === undefined ? message : `${message} (at position ${position})`);
    this.name = 'PatternError';
  }
}

export interface PatternMatch {
  /** Offsets of the whole match in the text (UTF-16 code units, as JavaScript strings count). */
  start: number;
  end: number;
  /** The one capture group's text: the metadata value. */
  value: string;
  /** Offsets of the captured text; -1 when the group did not take part. */
  valueStart: number;
  valueEnd: number;
}

const GLOBAL_FLAGS = /^\(\?([a-zA-Z]+)\)/;
const SCOPED_FLAGS = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]+))?:/;

interface Translation {
  source: string;
  groups: number;
}

/** Python syntax in, RE2 syntax out; exactly one capture group required. */
export function translatePythonPattern(pattern: string): Translation {
  let out = '';
  let groups = 0;
  let i = 0;
  let verbose = false;
  const globalFlags = new Set<string>();

  // Leading (?imsx) groups set flags for the whole pattern.
  for (let m = GLOBAL_FLAGS.exec(pattern); m; m = GLOBAL_FLAGS.exec(pattern.slice(i))) {
    for (const flag of m[1]) {
      if (flag === 'x') verbose = true;
      else if ('ims'.includes(flag)) globalFlags.add(flag);
      else if (flag !== 'u') refuseFlag(flag, i);
    }
    i += m[0].length;
  }
  if (globalFlags.size) out += `(?${[...globalFlags].join('')})`;

  const refuse = (message: string, at: number): never => {
    throw new PatternError(message, at);
  };

  while (i < pattern.length) {
    const c = pattern[i];
    if (verbose && /\s/.test(c)) {
      i++;
      continue;
    }
    if (verbose && c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++;
      continue;
    }
    if (c === '\\') {
      const escape = translateEscape(pattern, i, refuse);
      out += escape.text;
      i = escape.next;
      continue;
    }
    if (c === '[') {
      const cls = copyClass(pattern, i, refuse);
      out += cls.text;
      i = cls.next;
      continue;
    }
    if ((c === '+' || c === '*' || c === '?' || c === '}') && pattern[i + 1] === '+') {
      refuse('possessive quantifiers (*+, ++, ?+) are not supported', i + 1);
    }
    if (c !== '(') {
      out += c;
      i++;
      continue;
    }
    // An opening parenthesis: a group of some kind.
    const rest = pattern.slice(i);
    if (!rest.startsWith('(?')) {
      groups++;
      out += '(';
      i++;
    } else if (rest.startsWith('(?P<') || (rest.startsWith('(?<') && !rest.startsWith('(?<=') && !rest.startsWith('(?<!'))) {
      const name = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
      if (!name) refuse('a group name must be a letter or underscore followed by letters, digits or underscores', i);
      groups++;
      out += `(?P<${name![1]}>`;
      i += name![0].length;
    } else if (rest.startsWith('(?P=')) {
      refuse('backreferences such as (?P=name) cannot run in linear time and are not supported', i);
    } else if (rest.startsWith('(?=') || rest.startsWith('(?!')) {
      refuse('lookahead assertions (?= and (?! are not supported', i);
    } else if (rest.startsWith('(?<=') || rest.startsWith('(?<!')) {
      refuse('lookbehind assertions (?<= and (?<! are not supported', i);
    } else if (rest.startsWith('(?>')) {
      refuse('atomic groups (?> are not supported', i);
    } else if (rest.startsWith('(?(')) {
      refuse('conditional groups (?(…) are not supported', i);
    } else if (rest.startsWith('(?#')) {
      const end = pattern.indexOf(')', i);
      if (end < 0) refuse('the comment (?# is never closed', i);
      i = end + 1;
    } else if (rest.startsWith('(?:')) {
      out += '(?:';
      i += 3;
    } else {
      const scoped = SCOPED_FLAGS.exec(rest);
      if (!scoped) {
        if (GLOBAL_FLAGS.test(rest)) refuse('inline flags such as (?i) must be at the start of the pattern', i);
        refuse('unknown group syntax', i);
      }
      const [on, off = ''] = [scoped![1].replace('u', ''), scoped![2]];
      for (const flag of on + off) if (!'ims'.includes(flag)) refuseFlag(flag, i, true);
      out += `(?${on}${off ? `-${off}` : ''}:`;
      i += scoped![0].length;
    }
  }
  return { source: out, groups };
}

function refuseFlag(flag: string, at: number, scoped = false): never {
  if (flag === 'a') throw new PatternError('the ASCII-only flag (?a) has no equivalent here: matching is always Unicode', at);
  if (flag === 'L') throw new PatternError('the locale flag (?L) is not supported', at);
  if (flag === 'x' && scoped) throw new PatternError('the verbose flag x is only supported for the whole pattern, as (?x) at its start', at);
  throw new PatternError(`unknown inline flag "${flag}"`, at);
}

type Refuse = (message: string, at: number) => never;

/** One escape sequence starting at `at` (a backslash). */
function translateEscape(pattern: string, at: number, refuse: Refuse): { text: string; next: number } {
  const c = pattern[at + 1];
  if (c === undefined) refuse('the pattern ends with a lone backslash', at);
  if (c >= '1' && c <= '9') refuse(`backreferences such as \\${c} cannot run in linear time and are not supported`, at);
  if (c === 'Z') return { text: '\\z', next: at + 2 }; // Python's \Z is the very end of the text, RE2's \z
  if (c === '0') return { text: '\\x00', next: at + 2 };
  if (c === 'u' || c === 'U') {
    const digits = c === 'u' ? 4 : 8;
    const hex = pattern.slice(at + 2, at + 2 + digits);
    if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) refuse(`\\${c} needs ${digits} hexadecimal digits`, at);
    return { text: `\\x{${hex}}`, next: at + 2 + digits };
  }
  if (c === 'N') refuse('named characters \\N{…} are not supported: write the character itself', at);
  return { text: `\\${c}`, next: at + 2 };
}

/** A character class from its "[" to its "]", escapes translated. */
function copyClass(pattern: string, at: number, refuse: Refuse): { text: string; next: number } {
  let i = at + 1;
  let text = '[';
  if (pattern[i] === '^') text += pattern[i++];
  if (pattern[i] === ']') text += '\\]', i++; // a leading "]" is literal in Python
  while (i < pattern.length && pattern[i] !== ']') {
    if (pattern[i] === '\\') {
      const escape = translateEscape(pattern, i, refuse);
      text += escape.text === '\\z' ? 'Z' : escape.text;
      i = escape.next;
    } else if (pattern[i] === '[') {
      text += '\\[';
      i++;
    } else {
      text += pattern[i++];
    }
  }
  if (i >= pattern.length) refuse('the character class [ is never closed', at);
  return { text: `${text}]`, next: i + 1 };
}

/** RE2's own message, without the echo of the whole pattern. */
function engineReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
}

/** A translated pattern, compiled once and kept (RE2 objects live in WebAssembly memory). */
const compiled = new BoundedMap<string, RE2>(512);

function compile(source: string, original: string): RE2 {
  let regex = compiled.get(source);
  if (!regex) {
    try {
      regex = new RE2(source, 'gu');
    } catch (error) {
      const reason = engineReason(error);
      // RE2 names the offending fragment: point at it in the pattern as written.
      const fragment = /: (\S+)$/.exec(reason)?.[1];
      const at = fragment ? original.indexOf(fragment) : -1;
      throw new PatternError(`not a valid pattern: ${reason}`, at >= 0 ? at : undefined);
    }
    compiled.set(source, regex);
  }
  return regex;
}

/** A Python-style pattern with one capture group, checked and ready to match. */
export class RulePattern {
  private readonly regex: RE2;
  /** The pattern as RE2 runs it. */
  readonly translated: string;

  constructor(readonly pattern: string) {
    const { source, groups } = translatePythonPattern(pattern);
    this.translated = source;
    if (groups !== 1) {
      throw new PatternError(`a rule pattern needs exactly one capture group, the value to extract; this one has ${groups}` + (groups ? ' (make the others non-capturing: (?:…))' : ' (wrap the value in parentheses)'));
    }
    this.regex = compile(source, pattern);
  }

  /** The first match in the text (its first MAX_MATCH_TEXT characters), or null. */
  first(text: string): PatternMatch | null {
    return this.all(text, 1)[0] ?? null;
  }

  /** Matches left to right, at most `limit`; an empty match moves on by one character. */
  all(text: string, limit: number): PatternMatch[] {
    const input = text.length > MAX_MATCH_TEXT ? text.slice(0, MAX_MATCH_TEXT) : text;
    const matches: PatternMatch[] = [];
    const regex = this.regex;
    regex.lastIndex = 0;
    while (matches.length < limit && regex.lastIndex <= input.length) {
      const found = regex.exec(input);
      if (!found) break;
      const whole = found[0] ?? '';
      const value = found[1];
      // RE2 here reports no group offsets: the value is placed at its last occurrence inside the match.
      const valueStart = value === undefined ? -1 : found.index + whole.lastIndexOf(value);
      matches.push({ start: found.index, end: found.index + whole.length, value: value ?? '', valueStart, valueEnd: value === undefined ? -1 : valueStart + value.length });
      if (whole.length === 0) regex.lastIndex = found.index + 1;
    }
    regex.lastIndex = 0;
    return matches;
  }
}
