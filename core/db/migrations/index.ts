import type { Migration } from 'kysely';
import * as m0001 from './0001-core.js';
import * as m0002 from './0002-mfa.js';
import * as m0003 from './0003-oidc.js';
import * as m0004 from './0004-password-reset.js';
import * as m0005 from './0005-documents.js';
import * as m0006 from './0006-conversations.js';
import * as m0007 from './0007-source-runs.js';
import * as m0008 from './0008-oidc-private-network.js';
import * as m0009 from './0009-metadata-rules.js';
import * as m0010 from './0010-schedules.js';
import * as m0011 from './0011-audit.js';
import * as m0012 from './0012-groups.js';
import * as m0013 from './0013-ocr-pages.js';
import * as m0014 from './0014-analytics-access.js';
import * as m0015 from './0015-orphaned-rules.js';
import * as m0016 from './0016-chunk-document-index.js';
import * as m0017 from './0017-document-access-index.js';
import * as m0018 from './0018-document-keywords.js';
import * as m0019 from './0019-document-words.js';

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
  '0009-metadata-rules': m0009,
  '0010-schedules': m0010,
  '0011-audit': m0011,
  '0012-groups': m0012,
  '0013-ocr-pages': m0013,
  '0014-analytics-access': m0014,
  '0015-orphaned-rules': m0015,
  '0016-chunk-document-index': m0016,
  '0017-document-access-index': m0017,
  '0018-document-keywords': m0018,
  '0019-document-words': m0019,
};
