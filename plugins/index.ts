import type { FastifyPluginAsync } from 'fastify';
import users from './users/index.js';
import sessions from './sessions/index.js';
import auth from './auth/index.js';

/** Feature plugins in boot order: read top to bottom. */
export const featurePlugins: FastifyPluginAsync[] = [
  users,
  sessions,
  auth,
];
