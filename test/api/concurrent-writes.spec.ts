import { afterEach, describe, expect, it } from 'vitest';
import { prose } from '../fixtures/documents.js';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

/**
 * Requests that arrive together and check before they write: the answer must be what one after the other would get
 * (one write, the rest the route's own 409), never a second copy and never a 500.
 */
let t: TestApp;
afterEach(() => t.close());

const statuses = (responses: Array<{ statusCode: number }>) => responses.map((res) => res.statusCode).sort();

describe('concurrent writes', () => {
  it('one file uploaded six times at once is one document and five 409 duplicate_document', async () => {
    t = await startApp();
    const token = (await t.login()).access;
    const { payload, headers } = multipartBody([{ name: 'file', content: prose(11, 40), filename: 'same.txt' }]);
    const answers = await Promise.all(Array.from({ length: 6 }, () => t.request({ method: 'POST', url: '/api/docs/upload', token, payload, headers })));
    expect(statuses(answers)).toEqual([202, 409, 409, 409, 409, 409]);
    for (const res of answers.filter((res) => res.statusCode === 409)) expect(res.json().error.code).toBe('duplicate_document');
    expect(await snapshot(t.app, 'documents')).toHaveLength(1);
  });

  it('uploads sent together do not pass the plan’s document count between them', async () => {
    t = await startApp(LICENSE_ENV);
    await applyLicense(t, 'ENTERPRISE', { documents: 2, file_size_bytes: 1 << 20, storage_bytes: 1 << 30 });
    const token = (await t.login()).access;
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, n) => {
        const { payload, headers } = multipartBody([{ name: 'file', content: prose(20 + n, 40), filename: `doc-${n}.txt` }]);
        return t.request({ method: 'POST', url: '/api/docs/upload', token, payload, headers });
      }),
    );
    expect(statuses(answers)).toEqual([202, 202, 403, 403, 403]);
    for (const res of answers.filter((res) => res.statusCode === 403)) expect(res.json().error.code).toBe('plan_limit_exceeded');
    expect(await snapshot(t.app, 'documents')).toHaveLength(2);
  });

  it('one username created five times at once is one user and four 409 username_taken', async () => {
    t = await startApp();
    const token = (await t.login()).access;
    const payload = { username: 'Racer', password: 'racer-password-long', role: 'viewer', email: 'racer@example.test' };
    const answers = await Promise.all(Array.from({ length: 5 }, (_, n) => t.request({ method: 'POST', url: '/api/auth/users', token, payload: { ...payload, username: n % 2 ? 'racer' : 'Racer' } })));
    expect(statuses(answers)).toEqual([201, 409, 409, 409, 409]);
    for (const res of answers.filter((res) => res.statusCode === 409)) expect(res.json().error).toMatchObject({ code: 'username_taken', field: 'body.username' });
    expect((await snapshot(t.app, 'users')).filter((user) => (user as { username: string }).username.toLowerCase() === 'racer')).toHaveLength(1);
  });
});
