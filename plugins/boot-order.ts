import type { FastifyPluginAsync } from 'fastify';
import health from './health/index.js';
import audit from './audit/index.js';
import users from './users/index.js';
import sessions from './sessions/index.js';
import groups from './groups/index.js';
import auth from './auth/index.js';
import mfa from './mfa/index.js';
import passwordReset from './password-reset/index.js';
import oidc from './oidc/index.js';
import license from './license/index.js';
import branding from './branding/index.js';
import hardware from './hardware/index.js';
import jobs from './jobs/index.js';
import searchIndex from './search-index/index.js';
import llm from './llm/index.js';
import documents, { documentsApi } from './documents/index.js';
import ingestion from './ingestion/index.js';
import connectors from './connectors/index.js';
import integrations from './integrations/index.js';
import schedules, { scheduler } from './schedules/index.js';
import retrieval from './retrieval/index.js';
import conversations from './conversations/index.js';
import chat from './chat/index.js';
import metadataRules from './metadata-rules/index.js';
import analytics from './analytics/index.js';
import apiDocs from './api-docs/index.js';
import webUi from './web-ui/index.js';

/** Feature plugins in boot order: read top to bottom. */
export const featurePlugins: FastifyPluginAsync[] = [
  health,
  scheduler,
  audit,
  users,
  sessions,
  groups,
  auth,
  mfa,
  passwordReset,
  oidc,
  license,
  branding,
  hardware,
  jobs,
  searchIndex,
  llm,
  documents,
  ingestion,
  documentsApi,
  connectors,
  integrations,
  schedules,
  retrieval,
  conversations,
  chat,
  metadataRules,
  analytics,
  apiDocs,
  // Last: its catch-all GET serves the UI for every path no route above claimed.
  webUi,
];
