import { Type } from 'typebox';

/** A string from a fixed list, as a plain JSON Schema enum (clear "allowed values" errors, clean OpenAPI). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * Characters that show nothing yet change what is shown: Unicode controls (Cc) and the bidirectional
 * controls (U+202E turns "report<U+202E>fdp.exe" into "reportexe.pdf" on screen). For a character class.
 */
export const INVISIBLE_CONTROLS = '\\p{Cc}\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';

/** Text that says something: at least one character that is neither space nor an invisible control. */
export const VISIBLE_TEXT_PATTERN = `[^\\s${INVISIBLE_CONTROLS}]`;
