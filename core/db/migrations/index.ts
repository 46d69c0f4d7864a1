import type { Migration } from 'kysely';
import * as m0001 from './0001-core.js';

/** Numbered, forward-only. Append; never edit a migration that has shipped. */
export const migrations: Record<string, Migration> = {
  '0001-core': m0001,
};
