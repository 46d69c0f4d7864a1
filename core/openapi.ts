import type { SwaggerOptions } from '@fastify/swagger';
import { VERSION } from './version.js';

/**
 * The OpenAPI 3 document's frame; routes fill it in from their schemas, and the guard adds
 * each route's access (security, description, x-hearth-access) at boot.
 */
export const openApiOptions: SwaggerOptions = {
  openapi: {
    openapi: '3.0.3',
    info: { title: 'Hearth', version: VERSION, description: 'Self-hosted, offline document chat appliance' },
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
  },
  // Shared schemas keep their $id as component name (ErrorBody, not def-0).
  refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
};
