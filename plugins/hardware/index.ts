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
    const { hardwareProfile } = app.config;
    const { device } = hardwareProfile;
    // The board was read once by the config (the same files, under HEARTH_SYSTEM_ROOT when set): one answer everywhere.
    const jetson = device.jetsonModel !== null || device.l4tRelease !== null ? { model: device.jetsonModel, l4t_release: device.l4tRelease } : null;
    const profile = { name: hardwareProfile.name, reason: hardwareProfile.reason, applied: hardwareProfile.applied };
    app.log.info({ profile }, `hardware profile ${profile.name} (${profile.reason})`);
    app.decorate('hardware', new HardwareService({ ...systemProbe(), jetson: async () => jetson }, profile));
    await app.register(hardwareRoutes);
  },
  { name: 'hardware', dependencies: ['hearth-guard'] },
);
