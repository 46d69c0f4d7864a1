import type { ExtractedSection } from '../ingestion/index.js';
import { RulePattern } from './python-regex.js';

/**
 * How a source's rules turn a document into metadata, with no I/O: chunk boundaries before chunking,
 * then one value per field per chunk. Ingestion and the refresh job both label through `label`, from
 * the same inputs (the filename and the chunks in order), so both give the same values.
 */

export type RuleScope = 'full' | 'header' | 'filename';
export type RuleLevel = 'document' | 'chunk';

export interface RuleDefinition {
  id: string;
  field_name: string;
  pattern: string;
  scope: RuleScope;
  level: RuleLevel;
  chunk_boundary: boolean;
  priority: number;
}

/** Characters of the document's text that the `header` scope reads at document level. */
export const HEADER_CHARS = 1000;
/** Pieces one boundary rule may cut a section into, at most. */
const MAX_BOUNDARIES_PER_SECTION = 10_000;

export interface ChunkInput {
  text: string;
  heading?: string | null;
}

/** How a chunk got its value of a field. */
export type ValueOrigin = 'self' | 'inherited' | 'document';

export interface FieldValue {
  field_name: string;
  value: string;
  origin: ValueOrigin;
  /** The rule whose match gave the value (for an inherited one: the rule that matched the earlier chunk). */
  rule_id: string;
  /** Rules of the field that matched here (self or document level); 2 or more: the priority decided. */
  contenders: number;
}

export interface ChunkLabels {
  /** Per chunk, in order: its value of each field it has one of. */
  values: FieldValue[][];
  /** Per chunk, in order: every rule whose pattern matched it (a document-level rule: every chunk of a document it matched). */
  hits: string[][];
}

/** Highest priority first; ties: the oldest rule first (rules come in creation order). */
function byPriority<T extends { rule: RuleDefinition; order: number }>(a: T, b: T): number {
  return b.rule.priority - a.rule.priority || a.order - b.order;
}

/** A source's rules, compiled; `rules` in creation order. */
export class RuleSet {
  private readonly compiled: Array<{ rule: RuleDefinition; order: number; pattern: RulePattern }>;

  constructor(rules: RuleDefinition[]) {
    this.compiled = rules.map((rule, order) => ({ rule, order, pattern: new RulePattern(rule.pattern) })).sort(byPriority);
  }

  /** What decides the chunking: documents chunked under another key must be chunked again. '' when no rule sets boundaries. */
  boundaryKey(): string {
    return this.compiled
      .filter(({ rule }) => rule.chunk_boundary)
      .map(({ rule }) => `${rule.scope}\u0000${rule.pattern}`)
      .sort()
      .join('\u0001');
  }

  /** Cuts text sections where a boundary rule matches, so that each match starts a chunk of its own. */
  split(sections: ExtractedSection[]): ExtractedSection[] {
    const boundaries = this.compiled.filter(({ rule }) => rule.chunk_boundary && rule.scope !== 'filename');
    if (!boundaries.length) return sections;
    return sections.flatMap((section) => {
      if (section.kind !== 'text') return [section];
      const cuts = new Set<number>();
      for (const { pattern } of boundaries) for (const match of pattern.all(section.text, MAX_BOUNDARIES_PER_SECTION)) if (match.start > 0) cuts.add(match.start);
      if (!cuts.size) return [section];
      const points = [0, ...[...cuts].sort((a, b) => a - b), section.text.length];
      return points.slice(0, -1).flatMap((from, i) => {
        const text = section.text.slice(from, points[i + 1]).trim();
        return text ? [{ ...section, text, ...(i > 0 ? { boundary: true } : {}) }] : [];
      });
    });
  }

  /** Each chunk's values: its own match first, else the nearest earlier chunk's, else the document-level value. */
  label(filename: string, chunks: ChunkInput[]): ChunkLabels {
    const documentText = chunks.map((chunk) => chunk.text).join('\n\n');
    const values: FieldValue[][] = chunks.map(() => []);
    const hits: string[][] = chunks.map(() => []);

    const documentValues = new Map<string, FieldValue>();
    for (const { rule, pattern } of this.compiled.filter(({ rule }) => rule.level === 'document')) {
      const match = pattern.first(scopeText(rule.scope, filename, documentText.slice(0, rule.scope === 'header' ? HEADER_CHARS : undefined)));
      if (!match) continue;
      for (const chunkHits of hits) chunkHits.push(rule.id);
      const won = documentValues.get(rule.field_name);
      if (won) won.contenders++;
      else documentValues.set(rule.field_name, { field_name: rule.field_name, value: match.value, origin: 'document', rule_id: rule.id, contenders: 1 });
    }

    const chunkRules = this.compiled.filter(({ rule }) => rule.level === 'chunk');
    const fields = new Set([...documentValues.keys(), ...chunkRules.map(({ rule }) => rule.field_name)]);
    for (const field of fields) {
      const rules = chunkRules.filter(({ rule }) => rule.field_name === field);
      let previous: FieldValue | undefined;
      chunks.forEach((chunk, index) => {
        let own: FieldValue | undefined;
        for (const { rule, pattern } of rules) {
          const match = pattern.first(scopeText(rule.scope, filename, rule.scope === 'header' ? (chunk.heading ?? '') : chunk.text));
          if (!match) continue;
          hits[index].push(rule.id);
          if (own) own.contenders++;
          else own = { field_name: field, value: match.value, origin: 'self', rule_id: rule.id, contenders: 1 };
        }
        const inherited = previous && { ...previous, origin: 'inherited' as const, contenders: 0 };
        const value = own ?? inherited ?? documentValues.get(field);
        if (own) previous = own;
        if (value) values[index].push(value);
      });
    }
    return { values, hits };
  }
}

/** The text a rule reads: `header` is the document's first HEADER_CHARS characters, or a chunk's heading (see docs/metadata-rules.md). */
function scopeText(scope: RuleScope, filename: string, text: string): string {
  return scope === 'filename' ? filename : text;
}
