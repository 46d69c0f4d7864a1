import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBody, type Part } from '../fixtures/multipart.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

const filePart = (content: Buffer | string, filename = 'logo.png', contentType = 'image/png'): Part => ({ name: 'file', content, filename, contentType });

const solid = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 60, b: 20 } } });

const SVG_WITH_SCRIPT = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150"><script>alert(1)</script>' +
    '<rect width="300" height="150" fill="#c2410c"/></svg>',
);

describe('branding', () => {
  let t: TestApp;
  let admin: string;
  let viewer: string;

  // null means anonymous: undefined would pick up the admin default.
  const upload = (parts: Part[], token: string | null = admin) =>
    t.request({ method: 'POST', url: '/api/branding/logo', token: token ?? undefined, ...multipartBody(parts) });
  const put = (payload: object, token: string | null = admin) =>
    t.request({ method: 'PUT', url: '/api/branding', token: token ?? undefined, payload });

  beforeAll(async () => {
    t = await startApp();
    admin = (await t.login()).access;
    viewer = (await t.userWithRole('viewer')).access;
  });
  afterAll(async () => t.close());

  describe('configuration', () => {
    it('is public and starts at the defaults, with no logo', async () => {
      const res = await t.request({ method: 'GET', url: '/api/branding' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        app_name: 'Hearth',
        tagline: '',
        primary_color: '#C2410C',
        accent_color: '#1F2937',
        login_message: '',
        logo_url: null,
        updated_at: null,
      });
    });

    it('is replaced whole by an admin; omitted fields return to their defaults', async () => {
      const full = { app_name: 'Acme Docs', tagline: 'Ask the archive', primary_color: '#0a7cff', accent_color: '#112233', login_message: 'Staff only.' };
      const first = await put(full);
      expect(first.statusCode).toBe(200);
      expect(first.json()).toMatchObject({ ...full, primary_color: '#0A7CFF', logo_url: null });
      expect(Date.parse(first.json().updated_at)).not.toBeNaN();
      expect((await t.request({ method: 'GET', url: '/api/branding' })).json()).toEqual(first.json());

      const second = await put({ app_name: 'Acme' });
      expect(second.json()).toMatchObject({ app_name: 'Acme', tagline: '', primary_color: '#C2410C', accent_color: '#1F2937', login_message: '' });

      const reset = await put({});
      expect(reset.json()).toMatchObject({ app_name: 'Hearth', tagline: '' });
    });

    it.each([
      [{ theme: 'dark' }, 'body.theme'],
      [{ app_name: '' }, 'body.app_name'],
      [{ app_name: '   ' }, 'body.app_name'],
      [{ app_name: 'x'.repeat(65) }, 'body.app_name'],
      [{ tagline: 'x'.repeat(201) }, 'body.tagline'],
      [{ login_message: 'x'.repeat(1001) }, 'body.login_message'],
      [{ primary_color: 'red' }, 'body.primary_color'],
      [{ accent_color: '#12345' }, 'body.accent_color'],
      [{ tagline: null }, 'body.tagline'],
    ])('refuses %j with 400 naming %s and changes nothing', async (payload, field) => {
      const before = await snapshot(t.app, 'settings');
      const res = await put(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'validation_failed', field });
      expect(await snapshot(t.app, 'settings')).toEqual(before);
    });

    it('needs an admin to change', async () => {
      const before = await snapshot(t.app, 'settings');
      const anonymous = await put({ app_name: 'Nope' }, null);
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().error.code).toBe('unauthorized');
      const asViewer = await put({ app_name: 'Nope' }, viewer);
      expect(asViewer.statusCode).toBe(403);
      expect(asViewer.json().error.code).toBe('role_required');
      expect(await snapshot(t.app, 'settings')).toEqual(before);
    });
  });

  describe('logo', () => {
    it('is 404 in the JSON error shape before any upload', async () => {
      const res = await t.request({ method: 'GET', url: '/api/branding/logo' });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    });

    it('needs an admin to upload', async () => {
      const png = await solid(64, 64).png().toBuffer();
      expect((await upload([filePart(png)], null)).statusCode).toBe(401);
      const asViewer = await upload([filePart(png)], viewer);
      expect(asViewer.statusCode).toBe(403);
      expect(asViewer.json().error.code).toBe('role_required');
      expect(await snapshot(t.app, 'branding_logo')).toEqual([]);
    });

    it('stores a large PNG as a PNG within 512x512 and serves it publicly with caching headers', async () => {
      const res = await upload([filePart(await solid(1024, 768).png().toBuffer())]);
      expect(res.statusCode).toBe(200);
      expect(res.json().logo_url).toBe('/api/branding/logo');
      expect((await t.request({ method: 'GET', url: '/api/branding' })).json().logo_url).toBe('/api/branding/logo');

      const logo = await t.request({ method: 'GET', url: '/api/branding/logo' });
      expect(logo.statusCode).toBe(200);
      expect(logo.headers['content-type']).toBe('image/png');
      expect(logo.headers['cache-control']).toBe('public, no-cache');
      const meta = await sharp(logo.rawPayload).metadata();
      expect(meta).toMatchObject({ format: 'png', width: 512, height: 384 });

      const etag = String(logo.headers.etag);
      expect(etag).toMatch(/^".+"$/);
      const again = await t.request({ method: 'GET', url: '/api/branding/logo', headers: { 'if-none-match': `W/"other", ${etag}` } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
      const stale = await t.request({ method: 'GET', url: '/api/branding/logo', headers: { 'if-none-match': '"stale"' } });
      expect(stale.statusCode).toBe(200);
    });

    it('never enlarges a small image, and a new upload changes the ETag', async () => {
      const before = String((await t.request({ method: 'GET', url: '/api/branding/logo' })).headers.etag);
      expect((await upload([filePart(await solid(64, 32).png().toBuffer())])).statusCode).toBe(200);
      const logo = await t.request({ method: 'GET', url: '/api/branding/logo' });
      expect(await sharp(logo.rawPayload).metadata()).toMatchObject({ format: 'png', width: 64, height: 32 });
      expect(logo.headers.etag).not.toBe(before);
    });

    it('turns a JPEG into a PNG without its metadata', async () => {
      const jpeg = await solid(800, 800).jpeg().withExif({ IFD0: { Copyright: 'secret-owner' } }).toBuffer();
      expect((await sharp(jpeg).metadata()).exif).toBeDefined();
      expect((await upload([filePart(jpeg, 'logo.jpg', 'image/jpeg')])).statusCode).toBe(200);
      const png = (await t.request({ method: 'GET', url: '/api/branding/logo' })).rawPayload;
      const meta = await sharp(png).metadata();
      expect(meta).toMatchObject({ format: 'png', width: 512, height: 512 });
      expect(meta.exif).toBeUndefined();
      expect(png.includes('secret-owner')).toBe(false);
    });

    it('rasterises SVG, so no script survives', async () => {
      expect((await upload([filePart(SVG_WITH_SCRIPT, 'logo.svg', 'image/svg+xml')])).statusCode).toBe(200);
      const png = (await t.request({ method: 'GET', url: '/api/branding/logo' })).rawPayload;
      expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 300, height: 150 });
      expect(png.includes('script')).toBe(false);
    });

    it.each(['webp', 'gif'] as const)('accepts %s', async (format) => {
      const image = await solid(100, 50).toFormat(format).toBuffer();
      expect((await upload([filePart(image, `logo.${format}`, `image/${format}`)])).statusCode).toBe(200);
      const png = (await t.request({ method: 'GET', url: '/api/branding/logo' })).rawPayload;
      expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 100, height: 50 });
    });

    describe('refused uploads leave the stored logo unchanged', () => {
      const refusals: Array<[string, () => Promise<Part[]>, number, string, string?]> = [
        ['a text file named .png', async () => [filePart('just some text, not an image')], 415, 'unsupported_media_type'],
        ['an empty file', async () => [filePart(Buffer.alloc(0))], 415, 'unsupported_media_type'],
        ['a TIFF (decodable but not accepted)', async () => [filePart(await solid(32, 32).tiff().toBuffer(), 'logo.tiff', 'image/tiff')], 415, 'unsupported_media_type'],
        ['a decompression bomb PNG', async () => [filePart(await solid(10_000, 10_000).png({ compressionLevel: 9 }).toBuffer())], 422, 'image_too_large', 'body.file'],
        ['an SVG declaring huge dimensions', async () => [filePart('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"/>', 'x.svg', 'image/svg+xml')], 422, 'image_too_large', 'body.file'],
        ['a file over 2 MiB', async () => [filePart(randomBytes(2 * 1024 * 1024 + 1))], 413, 'payload_too_large'],
        ['a file in another field', async () => [{ ...filePart(SVG_WITH_SCRIPT), name: 'logo' }], 400, 'file_required', 'body.file'],
        ['no file at all', async () => [], 400, 'file_required', 'body.file'],
        ['the file part without a filename', async () => [{ name: 'file', content: SVG_WITH_SCRIPT }], 400, 'filename_required', 'body.file'],
        ['a text field before the file', async () => [{ name: 'note', content: 'hi' }, filePart(SVG_WITH_SCRIPT)], 400, 'file_required', 'body.file'],
        // As the document upload: the body must end with the file (a multipart limit's 413 before).
        ['a text field after the file', async () => [filePart(SVG_WITH_SCRIPT), { name: 'note', content: 'hi' }], 400, 'one_file_only', 'body'],
        ['two files', async () => [filePart(SVG_WITH_SCRIPT), filePart(SVG_WITH_SCRIPT)], 400, 'one_file_only', 'body'],
      ];

      it.each(refusals)('%s', async (_name, parts, status, code, field) => {
        const before = await snapshot(t.app, 'branding_logo');
        expect(before).toHaveLength(1);
        const res = await upload(await parts());
        expect(res.statusCode).toBe(status);
        expect(res.json().error.code).toBe(code);
        if (field) expect(res.json().error.field).toBe(field);
        expect(await snapshot(t.app, 'branding_logo')).toEqual(before);
      });

      it('a JSON body instead of multipart', async () => {
        const before = await snapshot(t.app, 'branding_logo');
        const res = await t.request({ method: 'POST', url: '/api/branding/logo', token: admin, payload: { file: 'x' } });
        expect(res.statusCode).toBe(415);
        expect(res.json().error.code).toBe('unsupported_media_type');
        expect(await snapshot(t.app, 'branding_logo')).toEqual(before);
      });
    });

    it('multipart is accepted nowhere else', async () => {
      const res = await t.request({ method: 'PUT', url: '/api/branding', token: admin, ...multipartBody([filePart(SVG_WITH_SCRIPT)]) });
      expect(res.statusCode).toBe(415);
    });
  });
});
