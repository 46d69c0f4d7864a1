import { isUniqueViolation } from './db/sqlite-errors.js';
import type { HttpError } from './errors.js';

/**
 * The one way a name that must be unique is checked (connectors, integrations, OIDC providers): before
 * the write, for a 409 that names the field, and on the write itself, where the table's UNIQUE
 * constraint turns a request that raced another into the same 409. The owner's `find` says how names
 * compare (connectors and integrations: in any case).
 */
export class UniqueName {
  constructor(
    private readonly find: (name: string) => Promise<{ id: string } | undefined>,
    private readonly taken: () => HttpError,
  ) {}

  /** Throws the 409 when another row (not `selfId`, the one being renamed) has the name. */
  async assertFree(name: string, selfId?: string): Promise<void> {
    const other = await this.find(name);
    if (other && other.id !== selfId) throw this.taken();
  }

  /** Runs the write, turning a UNIQUE violation into the 409. */
  async write<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      if (isUniqueViolation(error)) throw this.taken();
      throw error;
    }
  }
}
