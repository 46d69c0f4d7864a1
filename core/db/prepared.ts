import type { CompiledQuery, Kysely } from 'kysely';
import { directReader, directRunner } from './database.sqlite.js';

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
  const bind = binder<Params>(compiled);
  const direct = directRunner(db);
  return async (params) => {
    const parameters = bind(params);
    const rows = direct?.(compiled.sql, parameters);
    return rows ? (rows as Row[]) : (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}

/**
 * The same for a read that must answer synchronously (a log serializer cannot wait): run at once on
 * the SQLite connection, even while another caller's transaction is open. Undefined on other dialects.
 */
export function preparedNow<Row, Params extends Record<string, unknown>>(db: Kysely<never>, compiled: CompiledQuery<Row>): ((params: Params) => Row[]) | undefined {
  const read = directReader(db);
  if (!read) return undefined;
  const bind = binder<Params>(compiled);
  return (params) => read(compiled.sql, bind(params)) as Row[];
}

/** Substitutes the '$name' placeholders of a compiled query by name; every other parameter stays as compiled. */
function binder<Params extends Record<string, unknown>>(compiled: CompiledQuery<unknown>): (params: Params) => unknown[] {
  const slots = compiled.parameters.map((value) => (typeof value === 'string' && value.startsWith('$') ? value.slice(1) : null));
  return (params) => compiled.parameters.map((value, i) => (slots[i] !== null && slots[i]! in params ? params[slots[i]!] : value));
}
