import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ONE_FILE_LIMITS, oneFileUpload } from '../../core/one-file-upload.js';
import { LOGO_MAX_UPLOAD_BYTES } from './logo-image.js';
import { BrandingBody, BrandingView } from './schemas.js';

const publicAccess = { access: { public: true as const } };
const admin = { access: { role: 'admin' as const } };
const UPLOAD_FIELD = 'file';
/** The URL never changes, so browsers keep the image but ask again each time (a cheap 304). */
const LOGO_CACHE_CONTROL = 'public, no-cache';

const PngImage = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' });

/** Weak comparison, as RFC 9110 asks for If-None-Match. */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || candidate.replace(/^W\//, '') === etag;
  });
}

/** The one `file` part of a multipart body (else 415), read whole (over LOGO_MAX_UPLOAD_BYTES: 413), and nothing after it (400 one_file_only). */
async function readUpload(request: FastifyRequest): Promise<Buffer> {
  const { file, nothingElse } = await oneFileUpload(request, { field: UPLOAD_FIELD, what: 'image', fileSizeBytes: LOGO_MAX_UPLOAD_BYTES });
  const content = await file.toBuffer();
  await nothingElse();
  return content;
}

export const brandingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/branding', {
    config: publicAccess,
    schema: { summary: 'Branding configuration', tags: ['branding'], response: { 200: BrandingView } },
  }, async () => app.branding.get());

  app.put('/api/branding', {
    config: admin,
    schema: {
      summary: 'Replace the branding configuration',
      description: 'Omitted fields return to their defaults; unknown fields are refused.',
      tags: ['branding'],
      body: BrandingBody,
      response: { 200: BrandingView },
    },
  }, async (request) => {
    const branding = await app.branding.replace(request.body);
    request.log.info({ user: app.logPrivacy.caller(request), event: 'config.update', setting: 'branding' }, 'branding updated');
    await app.audit.record(request, { event: 'config.update', target: 'branding', details: { fields: Object.keys(request.body) } });
    return branding;
  });

  app.get('/api/branding/logo', {
    config: publicAccess,
    schema: {
      summary: 'Branding logo (PNG)',
      tags: ['branding'],
      response: {
        200: { description: 'PNG image, at most 512x512', content: { 'image/png': { schema: PngImage } } },
        304: Type.Null({ description: 'Not modified (If-None-Match)' }),
      },
    },
  }, async (request, reply) => {
    const logo = await app.branding.logo();
    // same-site: the UI on DOCKER_PORT may embed the logo served from the API port.
    reply.header('cache-control', LOGO_CACHE_CONTROL).header('etag', logo.etag).header('cross-origin-resource-policy', 'same-site');
    if (etagMatches(request.headers['if-none-match'], logo.etag)) return reply.code(304).send(null);
    return reply.type('image/png').send(logo.png);
  });

  // Multipart parsing exists only in this scope: no other route accepts multipart/form-data by accident.
  await app.register(async (upload) => {
    await upload.register(multipart, { limits: ONE_FILE_LIMITS });
    upload.post('/api/branding/logo', {
      config: admin,
      schema: {
        summary: 'Upload the logo',
        description:
          'multipart/form-data with one part named "file" (with its filename, at most 2 MiB), and nothing else: PNG, JPEG, WebP, GIF or SVG. ' +
          'Stored as a PNG of at most 512x512 without metadata. 400 file_required, filename_required or one_file_only (a second part: nothing is stored), ' +
          '413 too large, 415 a body that is not multipart or not a supported image, 422 image_too_large.',
        tags: ['branding'],
        consumes: ['multipart/form-data'],
        response: { 200: BrandingView },
      },
    }, async (request) => {
      const branding = await app.branding.setLogo(await readUpload(request));
      request.log.info({ user: app.logPrivacy.caller(request), event: 'config.update', setting: 'branding.logo' }, 'branding logo updated');
      await app.audit.record(request, { event: 'config.update', target: 'branding', details: { fields: ['logo'] } });
      return branding;
    });
  });
};
