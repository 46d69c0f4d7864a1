/** SQLite's error codes, as better-sqlite3 reports them: the one place that knows their names. */

/** The write broke a UNIQUE constraint or a PRIMARY KEY (a name or key already taken). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
