import fp from 'fastify-plugin';
import { systemProbe } from './probe.js';
import { hardwareRoutes } from './routes.js';
import { HardwareService } from './service.js';

// The public surface: what other plugins may import.
export type { HardwareService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    hardware: HardwareService;
  }
}

/** What the box runs on: CPU, memory, GPUs, OS and Jetson board, for the admin UI and support. */
export default fp(
  async function hardware(app) {
    app.decorate('hardware', new HardwareService(systemProbe()));
    await app.register(hardwareRoutes);
  },
  { name: 'hardware', dependencies: ['hearth-guard'] },
);
