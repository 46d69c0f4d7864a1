import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../core/auth/guard.js';
import { ApplyLicenseBody, LicenseView } from './schemas.js';

export const licenseRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/license', {
    config: { access: { role: 'viewer' } },
    schema: { summary: 'Plan tier, limits and usage', tags: ['license'], response: { 200: LicenseView } },
  }, async () => app.license.view());

  app.post('/api/license', {
    config: { access: { role: 'admin' } },
    schema: {
      summary: 'Apply or replace the licence',
      description: 'Takes effect at once, without a restart. A key that fails any check changes nothing.',
      tags: ['license'],
      body: ApplyLicenseBody,
      response: { 200: LicenseView },
    },
  }, async (request) => {
    const principal = principalOf(request);
    const license = await app.license.apply(request.body.license_key, principal.id);
    request.log.info(
      { event: 'license.apply', licensee: license.licensee, tier: license.tier, licence_id: license.id, by: app.logPrivacy.user(principal.id) },
      'licence applied',
    );
    await app.audit.record(request, { event: 'license.apply', target: license.id, details: { tier: license.tier, licensee: license.licensee, expires_at: license.expires_at } });
    return app.license.view();
  });
};
