import type { CompiledQuery, Kysely } from 'kysely';
import { directRunner } from './database.js';

/**
 * A query built and compiled once by the dialect in use, then run with fresh parameters. Build it
 * with placeholders '$name' where values go; each call substitutes them by name, and every other
 * parameter of the query (constants) stays as compiled. For the per-request hot path, where
 * building the query anew cost more than running it.
 *
 * On SQLite the compiled SQL runs straight on the connection: kysely's executor (connection
 * provider, mutex, result transforms: a dozen promise hops) cost five times the query itself on an
 * authenticated read. The SQL is still kysely's, so another dialect runs the same text through kysely.
 */
export function prepared<Row, Params extends Record<string, unknown>>(db: Kysely<never>, compiled: CompiledQuery<Row>): (params: Params) => Promise<Row[]> {
  const slots = compiled.parameters.map((value) => (typeof value === 'string' && value.startsWith('$') ? value.slice(1) : null));
  const direct = directRunner(db);
  return async (params) => {
    const parameters = compiled.parameters.map((value, i) => (slots[i] !== null && slots[i]! in params ? params[slots[i]!] : value));
    const rows = direct?.(compiled.sql, parameters);
    return rows ? (rows as Row[]) : (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}
