import { Type } from 'typebox';

/** A string from a fixed list, as a plain JSON Schema enum (clear "allowed values" errors, clean OpenAPI). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
