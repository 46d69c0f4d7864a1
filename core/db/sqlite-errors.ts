/** SQLite's error codes, as better-sqlite3 reports them: the one place that knows their names. */

/** The write broke a UNIQUE constraint (a name or key already taken). */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}
