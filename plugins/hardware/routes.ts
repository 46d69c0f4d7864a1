import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HardwareView } from './schemas.js';

export const hardwareRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/hardware', {
    config: { access: { role: 'viewer' } },
    schema: { summary: 'CPU, GPU, memory and OS of this machine', tags: ['hardware'], response: { 200: HardwareView } },
  }, async () => app.hardware.get());
};
