import { realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { prose } from '../fixtures/documents.js';
import { holdAround, holdFirst, holdTogether, holdUntil } from '../fixtures/held-calls.js';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { scratchFolders } from '../fixtures/scratch-folders.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

/**
 * Requests that arrive together and check before they write: the answer must be what one after the other would get
 * (one write, the rest the route's own 409; one delete, the rest 404), never a second copy, a second side effect or a 500.
 */
let t: TestApp;
afterEach(async () => {
  vi.restoreAllMocks();
  await t.close();
});

const statuses = (responses: Array<{ statusCode: number }>) => responses.map((res) => res.statusCode).sort();
/** The audit entries of one event, straight from the table. */
const audited = async (event: string) => (await snapshot(t.app, 'audit_log')).filter((entry) => (entry as { event: string }).event === event);
/** The log lines of one message. */
const logged = (message: string) => t.logs().split('\n').filter((line) => line.includes(`"msg":"${message}"`));
/** A service's own repository, to hold a request at its write. */
const repositoryOf = (service: object) => (service as unknown as { repository: Record<string, unknown> }).repository;
/** Group names that a user, document, connector or integration names and no group has: none, ever. */
async function namesWithoutGroup(): Promise<string[]> {
  const groups = new Set((await snapshot(t.app, 'groups')).map((row) => (row as { name: string }).name));
  const named = [];
  for (const table of ['users', 'documents', 'connectors', 'integrations'] as const) {
    for (const row of (await snapshot(t.app, table)) as Array<{ groups: string }>) named.push(...(JSON.parse(row.groups) as string[]));
  }
  return named.filter((name) => !groups.has(name));
}

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

  it('one group name created five times at once is one group and four 409 group_exists', async () => {
    t = await startApp(LICENSE_ENV);
    await applyLicense(t, 'ENTERPRISE');
    const token = (await t.login()).access;
    holdUntil(t.app.groups, 'create', 5);
    const answers = await Promise.all(Array.from({ length: 5 }, (_, n) => t.request({ method: 'POST', url: '/api/groups', token, payload: { name: n % 2 ? 'legal' : 'Legal' } })));
    expect(statuses(answers)).toEqual([201, 409, 409, 409, 409]);
    for (const res of answers.filter((res) => res.statusCode === 409)) expect(res.json().error).toMatchObject({ code: 'group_exists', field: 'body.name' });
    expect((await snapshot(t.app, 'groups')).filter((group) => (group as { name: string }).name.toLowerCase() === 'legal')).toHaveLength(1);
    expect(await audited('group.create')).toHaveLength(1);
  });

  it('a group deleted while a document is given to it alone: the delete and its group_in_use check are one, so one of the two goes first', async () => {
    t = await startApp(LICENSE_ENV);
    await applyLicense(t, 'ENTERPRISE');
    const token = (await t.login()).access;
    const { payload, headers } = multipartBody([{ name: 'file', content: prose(41, 40), filename: 'plan.txt' }]);
    const documentId = (await t.request({ method: 'POST', url: '/api/docs/upload', token, payload, headers })).json().document.id;
    const group = (await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Legal' } })).json();
    // Both held at the groups service until both got there, so that the delete's check meets the access change.
    holdTogether([t.app.groups, 'delete'], [t.app.groups, 'setDocumentGroups']);
    const [deleted, given] = await Promise.all([
      t.request({ method: 'DELETE', url: `/api/groups/${group.id}`, token }),
      t.request({ method: 'PUT', url: `/api/documents/${documentId}/access`, token, payload: { groups: ['Legal'] } }),
    ]);
    const [document] = (await snapshot(t.app, 'documents')) as Array<{ groups: string }>;
    const groups = (await snapshot(t.app, 'groups')).map((row) => (row as { name: string }).name);
    if (deleted.statusCode === 204) {
      // The delete first: the access change then names a group that is gone.
      expect(given.statusCode, given.body).toBe(400);
      expect(given.json().error).toMatchObject({ code: 'unknown_group', field: 'body.groups' });
      expect(JSON.parse(document.groups)).toEqual(['everyone']);
      expect(groups).toEqual(['everyone']);
    } else {
      // The access change first: the group now alone reads the document and stays.
      expect(deleted.statusCode, deleted.body).toBe(409);
      expect(deleted.json().error.code).toBe('group_in_use');
      expect(given.statusCode, given.body).toBe(200);
      expect(JSON.parse(document.groups)).toEqual(['Legal']);
      expect(groups.sort()).toEqual(['Legal', 'everyone']);
    }
  });

  describe('a write naming groups held after its checks while a group is deleted or renamed (or its source’s access changes): it goes wholly after, never naming a group that is gone', () => {
    const folder = scratchFolders('hearth-concurrent-groups-');

    async function enterprise(env: Record<string, string> = {}): Promise<string> {
      t = await startApp({ ...LICENSE_ENV, ...env });
      await applyLicense(t, 'ENTERPRISE');
      return (await t.login()).access;
    }

    /** Deletes the group, or renames it to Counsel: either way no group is called Legal after it. */
    async function deleteOrRename(change: 'delete' | 'rename', groupId: string, token: string): Promise<void> {
      const res = change === 'delete'
        ? await t.request({ method: 'DELETE', url: `/api/groups/${groupId}`, token })
        : await t.request({ method: 'PUT', url: `/api/groups/${groupId}`, token, payload: { name: 'Counsel' } });
      expect(res.statusCode, res.body).toBe(change === 'delete' ? 204 : 200);
    }

    /** A connector over a fresh folder holding one file, not scanned yet. */
    async function connectorWithOneFile(token: string, root: string): Promise<string> {
      writeFileSync(path.join(root, 'memo.txt'), `Memo. ${prose(51, 20)}\n`);
      const created = await t.request({ method: 'POST', url: '/api/connectors', token, payload: { name: 'Shared', path: root, enabled: true } });
      expect(created.statusCode, created.body).toBe(201);
      return created.json().id;
    }

    for (const change of ['delete', 'rename'] as const) {
      it(`a document's access change meeting its group's ${change}: 400 unknown_group, as after it, and nothing written`, async () => {
        const token = await enterprise();
        const { payload, headers } = multipartBody([{ name: 'file', content: prose(42, 40), filename: 'brief.txt' }]);
        const documentId = (await t.request({ method: 'POST', url: '/api/docs/upload', token, payload, headers })).json().document.id;
        const group = (await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Legal' } })).json();
        const write = holdFirst(repositoryOf(t.app.groups), 'setDocumentGroups');
        const given = t.request({ method: 'PUT', url: `/api/documents/${documentId}/access`, token, payload: { groups: ['legal'] } });
        await write.arrived;
        await deleteOrRename(change, group.id, token);
        write.release();
        const res = await given;
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error).toMatchObject({ code: 'unknown_group', field: 'body.groups' });
        expect((await snapshot(t.app, 'documents')).map((row) => JSON.parse((row as { groups: string }).groups))).toEqual([['everyone']]);
        expect(await namesWithoutGroup()).toEqual([]);
      });
    }

    for (const [source, named] of [['connectors', "a connector's"], ['integrations', "an integration's"]] as const) {
      it(`${named} access change meeting its group's delete: 400 unknown_group, as after it, and nothing written`, async () => {
        const root = realpathSync(await folder());
        const token = await enterprise({ CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
        const created = source === 'connectors'
          ? await t.request({ method: 'POST', url: '/api/connectors', token, payload: { name: 'Shared', path: root, enabled: false } })
          : await t.request({ method: 'POST', url: '/api/integrations', token, payload: { name: 'Wiki', kind: 'web', config: { start_url: 'http://127.0.0.1:9/', allow_private_network: true }, enabled: false } });
        expect(created.statusCode, created.body).toBe(201);
        const group = (await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Legal' } })).json();
        const write = holdFirst(repositoryOf(t.app.groups), 'setSourceGroups');
        const given = t.request({ method: 'PUT', url: `/api/${source}/${created.json().id}/access`, token, payload: { groups: ['Legal'] } });
        await write.arrived;
        await deleteOrRename('delete', group.id, token);
        write.release();
        const res = await given;
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error).toMatchObject({ code: 'unknown_group', field: 'body.groups' });
        expect((await t.request({ method: 'GET', url: `/api/${source}/${created.json().id}/access`, token })).json().groups).toEqual(['everyone']);
        expect(await namesWithoutGroup()).toEqual([]);
      });
    }

    it("a connector scan stamping its source's groups on a new document after one of them was deleted: the document names only those left", async () => {
      const root = realpathSync(await folder());
      const token = await enterprise({ CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
      const connectorId = await connectorWithOneFile(token, root);
      const group = (await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Legal' } })).json();
      expect((await t.request({ method: 'PUT', url: `/api/connectors/${connectorId}/access`, token, payload: { groups: ['Legal', 'everyone'] } })).statusCode).toBe(200);
      const insert = holdFirst(repositoryOf(t.app.documents), 'insert');
      expect((await t.request({ method: 'POST', url: `/api/connectors/${connectorId}/scan`, token })).statusCode).toBe(202);
      await insert.arrived;
      await deleteOrRename('delete', group.id, token);
      insert.release();
      await t.app.jobs.idle();
      expect((await snapshot(t.app, 'documents')).map((row) => JSON.parse((row as { groups: string }).groups))).toEqual([['everyone']]);
      expect(await namesWithoutGroup()).toEqual([]);
    });

    it("a connector scan meeting an access change of its source: the new document gets the source's new groups, not the ones read before", async () => {
      const root = realpathSync(await folder());
      const token = await enterprise({ CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
      const connectorId = await connectorWithOneFile(token, root);
      await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Legal' } });
      const insert = holdFirst(repositoryOf(t.app.documents), 'insert');
      expect((await t.request({ method: 'POST', url: `/api/connectors/${connectorId}/scan`, token })).statusCode).toBe(202);
      await insert.arrived;
      const restricted = await t.request({ method: 'PUT', url: `/api/connectors/${connectorId}/access`, token, payload: { groups: ['Legal'] } });
      expect(restricted.statusCode, restricted.body).toBe(200);
      insert.release();
      await t.app.jobs.idle();
      // Read from the table: the admin is not in Legal, and neither is anyone else.
      expect((await snapshot(t.app, 'documents')).map((row) => JSON.parse((row as { groups: string }).groups))).toEqual([['Legal']]);
    });

    it("a connector scan whose source is deleted while it registers a document: that document is readable by no group until the scan's end removes it", async () => {
      const root = realpathSync(await folder());
      const token = await enterprise({ CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
      const connectorId = await connectorWithOneFile(token, root);
      const legal = (await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Legal' } })).json();
      const me = (await t.request({ method: 'GET', url: '/api/auth/me', token })).json();
      expect((await t.request({ method: 'PUT', url: `/api/groups/${legal.id}/members/${me.id}`, token })).statusCode).toBe(204);
      expect((await t.request({ method: 'PUT', url: `/api/connectors/${connectorId}/access`, token, payload: { groups: ['Legal'] } })).statusCode).toBe(200);
      const insert = holdAround(repositoryOf(t.app.documents), 'insert');
      expect((await t.request({ method: 'POST', url: `/api/connectors/${connectorId}/scan`, token })).statusCode).toBe(202);
      await insert.arrived;
      expect((await t.request({ method: 'DELETE', url: `/api/connectors/${connectorId}`, token })).statusCode).toBe(204);
      insert.release();
      await insert.ran;
      // Registered after its source went, before the cancelled scan removes it: the source's groups are gone with it.
      const groupsOf = async () => (await snapshot(t.app, 'documents')).map((row) => JSON.parse((row as { groups: string }).groups));
      const meanwhile = await groupsOf();
      insert.finish();
      expect(meanwhile).toEqual([[]]);
      await t.app.jobs.idle();
      expect(await groupsOf()).toEqual([]);
    });

    it("a member added while the group is deleted after the add found it: 404 not_found, as after the delete, and the user names no such group", async () => {
      const token = await enterprise();
      const user = await t.userWithRole('viewer', 'joiner');
      const group = (await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Legal' } })).json();
      const found = holdFirst(repositoryOf(t.app.groups), 'find', { afterItRan: true });
      const added = t.request({ method: 'PUT', url: `/api/groups/${group.id}/members/${user.id}`, token });
      await found.arrived;
      await deleteOrRename('delete', group.id, token);
      found.release();
      const res = await added;
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.code).toBe('not_found');
      expect((await t.request({ method: 'GET', url: `/api/auth/users/${user.id}`, token })).json().groups).toEqual(['everyone']);
      expect(await namesWithoutGroup()).toEqual([]);
    });
  });

  describe('one thing deleted five times at once: one 204 and four 404 not_found, as one after the other; its side effects happen once', () => {
    const folder = scratchFolders('hearth-concurrent-');

    /** Five DELETEs of one URL sent together, then a sixth after them (the sequential answer). */
    async function deleteFiveTimes(url: string, token: string): Promise<void> {
      const answers = await Promise.all(Array.from({ length: 5 }, () => t.request({ method: 'DELETE', url, token })));
      expect(statuses(answers)).toEqual([204, 404, 404, 404, 404]);
      const after = await t.request({ method: 'DELETE', url, token });
      expect(after.statusCode).toBe(404);
      for (const res of [...answers.filter((res) => res.statusCode === 404), after]) expect(res.json().error).toEqual(after.json().error);
      expect(after.json().error.code).toBe('not_found');
    }

    it('a user', async () => {
      t = await startApp(LICENSE_ENV);
      await applyLicense(t, 'ENTERPRISE');
      const { id } = await t.userWithRole('viewer', 'leaver');
      await deleteFiveTimes(`/api/auth/users/${id}`, (await t.login()).access);
      expect(await audited('user.delete')).toHaveLength(1);
      expect(logged('user deleted')).toHaveLength(1);
    });

    it('a group', async () => {
      t = await startApp(LICENSE_ENV);
      await applyLicense(t, 'ENTERPRISE');
      const token = (await t.login()).access;
      const group = (await t.request({ method: 'POST', url: '/api/groups', token, payload: { name: 'Temporary' } })).json();
      await deleteFiveTimes(`/api/groups/${group.id}`, token);
      expect(await audited('group.delete')).toHaveLength(1);
    });

    it('a connector', async () => {
      const root = realpathSync(await folder());
      t = await startApp({ CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
      const token = (await t.login()).access;
      const created = await t.request({ method: 'POST', url: '/api/connectors', token, payload: { name: 'Shared', path: root, enabled: false } });
      expect(created.statusCode, created.body).toBe(201);
      await deleteFiveTimes(`/api/connectors/${created.json().id}`, token);
      expect(logged('connector deleted')).toHaveLength(1);
    });

    it('an integration: its metadata rules go once, by its delete listener', async () => {
      t = await startApp(LICENSE_ENV);
      await applyLicense(t, 'PRO');
      const token = (await t.login()).access;
      const created = await t.request({ method: 'POST', url: '/api/integrations', token, payload: { name: 'Wiki', kind: 'web', config: { start_url: 'http://127.0.0.1:9/', allow_private_network: true }, enabled: false } });
      expect(created.statusCode, created.body).toBe(201);
      const { id } = created.json();
      const rule = await t.request({ method: 'POST', url: `/api/metadata/${id}/rules`, token, payload: { field_name: 'team', pattern: 'team: (\\w+)', scope: 'full', level: 'document' } });
      expect(rule.statusCode, rule.body).toBe(201);
      const dropRules = vi.spyOn(t.app.metadataRules, 'sourceDeleted');
      await deleteFiveTimes(`/api/integrations/${id}`, token);
      expect(logged('integration deleted')).toHaveLength(1);
      expect(dropRules).toHaveBeenCalledTimes(1);
      expect(await snapshot(t.app, 'metadata_rules')).toEqual([]);
    });

    it('an OIDC provider', async () => {
      t = await startApp(LICENSE_ENV);
      await applyLicense(t, 'ENTERPRISE');
      const token = (await t.login()).access;
      const created = await t.request({
        method: 'POST', url: '/api/admin/oidc/providers', token, payload: {
          name: 'corp', display_name: 'Corp', client_id: 'hearth', discovery_url: 'http://127.0.0.1:9/.well-known/openid-configuration',
          redirect_uri: 'http://127.0.0.1:8000/api/auth/oidc/corp/callback', allow_private_network: true,
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      await deleteFiveTimes(`/api/admin/oidc/providers/${created.json().id}`, token);
      expect((await audited('config.update')).filter((entry) => JSON.parse((entry as { details: string }).details).action === 'delete')).toHaveLength(1);
      expect(logged('oidc provider deleted')).toHaveLength(1);
      expect(await snapshot(t.app, 'oidc_providers')).toEqual([]);
    });

    it('a metadata rule', async () => {
      t = await startApp(LICENSE_ENV);
      await applyLicense(t, 'PRO');
      const token = (await t.login()).access;
      const rule = await t.request({ method: 'POST', url: '/api/metadata/uploads/rules', token, payload: { field_name: 'team', pattern: 'team: (\\w+)', scope: 'full', level: 'document' } });
      expect(rule.statusCode, rule.body).toBe(201);
      await deleteFiveTimes(`/api/metadata/uploads/rules/${rule.json().id}`, token);
      expect(logged('metadata rule deleted')).toHaveLength(1);
      expect(await snapshot(t.app, 'metadata_rules')).toEqual([]);
    });

    it('a document (decided by the delete already)', async () => {
      t = await startApp();
      const token = (await t.login()).access;
      const { payload, headers } = multipartBody([{ name: 'file', content: prose(31, 40), filename: 'gone.txt' }]);
      const uploaded = await t.request({ method: 'POST', url: '/api/docs/upload', token, payload, headers });
      expect(uploaded.statusCode, uploaded.body).toBe(202);
      await deleteFiveTimes(`/api/docs/${uploaded.json().document.id}`, token);
      expect(await snapshot(t.app, 'documents')).toEqual([]);
    });
  });
});
