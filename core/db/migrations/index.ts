import type { Migration } from 'kysely';
import * as m0001 from './0001-core.js';
import * as m0002 from './0002-mfa.js';
import * as m0003 from './0003-oidc.js';
import * as m0004 from './0004-password-reset.js';
import * as m0005 from './0005-documents.js';
import * as m0006 from './0006-conversations.js';
import * as m0007 from './0007-source-runs.js';
import * as m0008 from './0008-oidc-private-network.js';
import * as m0013 from './0013-ocr-pages.js';

/** Numbered, forward-only. Append; never edit a migration that has shipped. */
export const migrations: Record<string, Migration> = {
  '0001-core': m0001,
  '0002-mfa': m0002,
  '0003-oidc': m0003,
  '0004-password-reset': m0004,
  '0005-documents': m0005,
  '0006-conversations': m0006,
  '0007-source-runs': m0007,
  '0008-oidc-private-network': m0008,
  '0013-ocr-pages': m0013,
};
