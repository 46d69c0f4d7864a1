/** Groups API per role and tier, with bad input; document access and the FREE view of users' groups. */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TestApp, snapshot, startApp } from '../helpers.js';
import { LICENSE_ENV, applyLicense } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';

let t: TestApp;
let admin: string;
beforeEach(async () => {
  t = await startApp(LICENSE_ENV);
  admin = (await t.login()).access;
});
afterEach(async () => t.close());

const create = (name: unknown, token = admin) => t.request({ method: 'POST', url: '/api/groups', token, payload: { name } });

describe('groups below ENTERPRISE', () => {
  it('are 403 tier_required on FREE and PRO, for every role', async () => {
    for (const tier of ['FREE', 'PRO'] as const) {
      if (tier === 'PRO') await applyLicense(t, 'PRO');
      for (const token of [admin, (await t.userWithRole('editor')).access]) {
        for (const [method, url] of [['GET', '/api/groups'], ['POST', '/api/groups'], ['PUT', '/api/documents/x/access'], ['GET', '/api/connectors/x/access']] as const) {
          const res = await t.request({ method, url, token, ...(method !== 'GET' ? { payload: { name: 'x', groups: ['everyone'] } } : {}) });
          expect(res.statusCode, `${tier} ${method} ${url}`).toBe(403);
          expect(res.json().error.code).toBe('tier_required');
        }
      }
    }
  });

  it('show only everyone in users, even for an OIDC claim group stored before the downgrade', async () => {
    const user = await t.userWithRole('viewer', 'claimed');
    await t.app.db.updateTable('users').set({ groups: JSON.stringify(['everyone', 'engineering']) }).where('id', '=', user.id).execute();
    const list = await t.request({ method: 'GET', url: '/api/auth/users', token: admin });
    expect(list.json().users.find((u: { id: string }) => u.id === user.id).groups).toEqual(['everyone']);
    const me = await t.request({ method: 'GET', url: '/api/auth/me', token: user.access });
    expect(me.json().groups).toEqual(['everyone']);
    await applyLicense(t, 'ENTERPRISE');
    const shown = await t.request({ method: 'GET', url: `/api/auth/users/${user.id}`, token: admin });
    expect(shown.json().groups).toEqual(['everyone', 'engineering']);
  });

  it('show only everyone in the documents list, even for a document whose stored groups still restrict it', async () => {
    const uploaded = await t.request({ method: 'POST', url: '/api/docs/upload', token: admin, ...multipartBody([{ name: 'file', content: 'Notes kept for the board.', filename: 'board.txt' }]) });
    expect(uploaded.json().document.groups).toEqual(['everyone']);
    await t.app.db.updateTable('users').set({ groups: JSON.stringify(['everyone', 'board']) }).where('username', '=', 'admin').execute();
    await t.app.db.updateTable('documents').set({ groups: JSON.stringify(['board']) }).where('id', '=', uploaded.json().document.id).execute();
    expect((await t.request({ method: 'GET', url: '/api/docs', token: admin })).json().documents[0].groups).toEqual(['everyone']);
    await applyLicense(t, 'ENTERPRISE');
    expect((await t.request({ method: 'GET', url: '/api/docs', token: admin })).json().documents[0].groups).toEqual(['board']);
  });
});

describe('groups on ENTERPRISE', () => {
  beforeEach(async () => applyLicense(t, 'ENTERPRISE'));

  it('lists everyone first, built in, holding every user', async () => {
    await t.userWithRole('viewer');
    const res = await t.request({ method: 'GET', url: '/api/groups', token: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json().groups[0]).toMatchObject({ id: 'everyone', name: 'everyone', builtin: true, origin: 'builtin', member_count: 2 });
  });

  it('lets admins create, rename and delete groups and manage members; editors only read the list; viewers nothing', async () => {
    const editor = await t.userWithRole('editor');
    const viewer = await t.userWithRole('viewer');
    expect((await t.request({ method: 'GET', url: '/api/groups', token: viewer.access })).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: '/api/groups', token: editor.access })).statusCode).toBe(200);
    expect((await create('sales', editor.access)).statusCode).toBe(403);

    const created = await create('Sales');
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    expect(created.json()).toMatchObject({ name: 'Sales', builtin: false, origin: 'local', member_count: 0 });
    expect((await t.request({ method: 'PUT', url: `/api/groups/${id}/members/${viewer.id}`, token: editor.access })).statusCode).toBe(403);
    expect((await t.request({ method: 'PUT', url: `/api/groups/${id}/members/${viewer.id}`, token: admin })).statusCode).toBe(204);
    expect((await t.request({ method: 'PUT', url: `/api/groups/${id}/members/${viewer.id}`, token: admin })).statusCode).toBe(204); // idempotent
    const members = await t.request({ method: 'GET', url: `/api/groups/${id}/members`, token: admin });
    expect(members.json().members.map((m: { id: string }) => m.id)).toEqual([viewer.id]);

    const renamed = await t.request({ method: 'PUT', url: `/api/groups/${id}`, token: admin, payload: { name: 'Revenue' } });
    expect(renamed.json()).toMatchObject({ name: 'Revenue', member_count: 1 });
    const me = await t.request({ method: 'GET', url: '/api/auth/me', token: viewer.access });
    expect(me.json().groups).toEqual(['everyone', 'Revenue']); // memberships follow the rename

    expect((await t.request({ method: 'DELETE', url: `/api/groups/${id}/members/${viewer.id}`, token: admin })).statusCode).toBe(204);
    expect((await t.request({ method: 'DELETE', url: `/api/groups/${id}`, token: editor.access })).statusCode).toBe(403);
    expect((await t.request({ method: 'DELETE', url: `/api/groups/${id}`, token: admin })).statusCode).toBe(204);
    expect((await t.request({ method: 'GET', url: `/api/groups/${id}`, token: admin })).statusCode).toBe(404);
  });

  it('refuses bad input with one error shape and changes nothing', async () => {
    await create('finance');
    const before = await snapshot(t.app, 'groups');
    const cases: Array<[unknown, number, string]> = [
      ['', 400, 'validation_failed'],
      ['   ', 400, 'validation_failed'],
      ['x'.repeat(65), 400, 'validation_failed'],
      ['bad\u0007name', 400, 'validation_failed'],
      [42, 400, 'validation_failed'],
      ['FINANCE', 409, 'group_exists'],
      ['Everyone', 409, 'group_exists'],
    ];
    for (const [name, status, code] of cases) {
      const res = await create(name);
      expect(res.statusCode, JSON.stringify(name)).toBe(status);
      expect(res.json().error.code).toBe(code);
    }
    const extra = await t.request({ method: 'POST', url: '/api/groups', token: admin, payload: { name: 'ok', role: 'admin' } });
    expect(extra.statusCode).toBe(400);
    expect(await snapshot(t.app, 'groups')).toEqual(before);
  });

  it('never renames, deletes or hand-joins everyone', async () => {
    const user = await t.userWithRole('viewer');
    for (const [method, url, payload] of [
      ['PUT', '/api/groups/everyone', { name: 'all' }],
      ['DELETE', '/api/groups/everyone', undefined],
      ['PUT', `/api/groups/everyone/members/${user.id}`, undefined],
      ['DELETE', `/api/groups/everyone/members/${user.id}`, undefined],
    ] as const) {
      const res = await t.request({ method, url, token: admin, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(409);
      expect(res.json().error.code).toBe('builtin_group');
    }
  });

  it('answers 404 for unknown groups and users', async () => {
    const id = (await create('ops')).json().id;
    expect((await t.request({ method: 'PUT', url: '/api/groups/nope/members/nobody', token: admin })).statusCode).toBe(404);
    const res = await t.request({ method: 'PUT', url: `/api/groups/${id}/members/nobody`, token: admin });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
  });

  it('sets document access by group name; refuses unknown groups and an empty list; will not delete a group that alone reads a document', async () => {
    const editor = await t.userWithRole('editor');
    const uploaded = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor.access, ...multipartBody([{ name: 'file', content: 'Some notes about the plan.', filename: 'notes.txt' }]) });
    const docId = uploaded.json().document.id;
    const legal = (await create('Legal')).json().id;
    const put = (groups: unknown, token = editor.access) => t.request({ method: 'PUT', url: `/api/documents/${docId}/access`, token, payload: { groups } });
    expect((await put([])).statusCode).toBe(400);
    const unknown = await put(['nosuch']);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'unknown_group', field: 'body.groups' });
    const set = await put(['legal']);
    expect(set.json()).toEqual({ id: docId, groups: ['Legal'] }); // the group's own spelling
    // The editor is not in Legal: the document is no longer theirs to list, read or re-open.
    expect((await t.request({ method: 'GET', url: '/api/docs', token: editor.access })).json().total).toBe(0);
    expect((await put(['everyone'])).statusCode).toBe(404);
    const refused = await t.request({ method: 'DELETE', url: `/api/groups/${legal}`, token: admin });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('group_in_use');
    expect((await t.request({ method: 'PUT', url: `/api/groups/${legal}/members/${editor.id}`, token: admin })).statusCode).toBe(204);
    expect((await put(['everyone', 'legal'])).statusCode).toBe(200);
    // The list shows each document's allowed groups, for the web UI's access column and dialog.
    expect((await t.request({ method: 'GET', url: '/api/docs', token: editor.access })).json().documents[0].groups).toEqual(['everyone', 'Legal']);
    expect((await t.request({ method: 'DELETE', url: `/api/groups/${legal}`, token: admin })).statusCode).toBe(204);
    expect((await t.request({ method: 'GET', url: '/api/docs', token: editor.access })).json().total).toBe(1);
  });
});

describe('a restricted source seen from outside its groups', () => {
  it('is absent from the lists and 404 on every route that names it, for outsiders of every role; members see it with its count', async () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'hearth-groups-source-')));
    await t.close();
    t = await startApp({ ...LICENSE_ENV, CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
    admin = (await t.login()).access;
    await applyLicense(t, 'ENTERPRISE');
    try {
      const outsiders = { viewer: await t.userWithRole('viewer'), editor: await t.userWithRole('editor'), admin: await t.userWithRole('admin') };
      const member = await t.userWithRole('viewer');
      for (const name of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(path.join(root, name), `Quarterly numbers for ${name}, kept by finance. `.repeat(20));
      const legal = (await create('Legal')).json();
      const adminId = (await t.request({ method: 'GET', url: '/api/auth/me', token: admin })).json().id;
      for (const userId of [adminId, member.id]) expect((await t.request({ method: 'PUT', url: `/api/groups/${legal.id}/members/${userId}`, token: admin })).statusCode).toBe(204);
      const connector = await t.request({ method: 'POST', url: '/api/connectors', token: admin, payload: { name: 'Finance', path: root } });
      expect(connector.statusCode, connector.body).toBe(201);
      const id = connector.json().id;
      const integration = await t.request({ method: 'POST', url: '/api/integrations', token: admin, payload: { name: 'Finance wiki', kind: 'web', config: { start_url: 'http://127.0.0.1:9/', allow_private_network: true } } });
      expect(integration.statusCode, integration.body).toBe(201);
      const siteId = integration.json().id;
      // Before access is restricted every reader sees both: the rule follows the groups, not the role.
      expect((await t.request({ method: 'GET', url: '/api/connectors', token: outsiders.viewer.access })).json().total).toBe(1);
      expect((await t.request({ method: 'PUT', url: `/api/connectors/${id}/access`, token: admin, payload: { groups: ['Legal'] } })).statusCode).toBe(200);
      expect((await t.request({ method: 'PUT', url: `/api/integrations/${siteId}/access`, token: admin, payload: { groups: ['Legal'] } })).statusCode).toBe(200);
      const scan = await t.request({ method: 'POST', url: `/api/connectors/${id}/scan`, token: admin });
      expect(scan.statusCode).toBe(202);
      await t.app.jobs.idle();

      const schedule = await t.request({ method: 'POST', url: '/api/schedules', token: admin, payload: { source_type: 'connector', source_id: id, cron: '0 3 * * *' } });
      expect(schedule.statusCode, schedule.body).toBe(201);
      expect((await t.request({ method: 'GET', url: '/api/schedules', token: admin })).json().total).toBe(1);
      // An admin in the group syncs it with the rest.
      const synced = (await t.request({ method: 'POST', url: '/api/connectors/sync-all', token: admin })).json();
      expect(synced.jobs).toHaveLength(1);
      await t.app.jobs.idle();
      for (const token of [admin, member.access]) {
        // The scan job (its summary counts the source's files) is theirs to see.
        expect((await t.request({ method: 'GET', url: '/api/jobs', token })).json().jobs.map((job: { id: string }) => job.id)).toContain(scan.json().id);
        expect((await t.request({ method: 'GET', url: `/api/jobs/${scan.json().id}`, token })).json().result).toMatchObject({ found: 3 });
        const listed = (await t.request({ method: 'GET', url: '/api/connectors', token })).json();
        expect(listed.connectors.map((c: { id: string; document_count: number }) => [c.id, c.document_count])).toEqual([[id, 3]]);
        expect((await t.request({ method: 'GET', url: `/api/connectors/${id}`, token })).json().document_count).toBe(3);
        expect((await t.request({ method: 'GET', url: '/api/integrations', token })).json()).toMatchObject({ total: 1, integrations: [{ id: siteId }] });
        expect((await t.request({ method: 'GET', url: `/api/integrations/${siteId}`, token })).statusCode).toBe(200);
        expect((await t.request({ method: 'GET', url: `/api/metadata/${id}/rules`, token })).statusCode).toBe(200);
        expect((await t.request({ method: 'GET', url: `/api/analytics/${id}/chunks-per-document`, token })).json()).toMatchObject({ count: 3 });
      }
      for (const [role, outsider] of Object.entries(outsiders)) {
        const token = outsider.access;
        expect((await t.request({ method: 'GET', url: '/api/connectors', token })).json(), role).toEqual({ connectors: [], total: 0 });
        expect((await t.request({ method: 'GET', url: '/api/integrations', token })).json(), role).toMatchObject({ integrations: [], total: 0 });
        // Nor its jobs: a scan's summary would tell how many files the source holds.
        expect((await t.request({ method: 'GET', url: '/api/jobs', token })).json().jobs.map((job: { id: string }) => job.id), role).not.toContain(scan.json().id);
        expect((await t.request({ method: 'GET', url: `/api/jobs/${scan.json().id}`, token })).statusCode, role).toBe(404);
        // Sync-all scans what they may see: nothing here, and no job of the hidden source is named.
        if (role !== 'viewer') expect((await t.request({ method: 'POST', url: '/api/connectors/sync-all', token })).json(), role).toEqual({ jobs: [] });
        if (role === 'admin') {
          // Its schedule follows it: not listed, 404 by id, and the source is unknown to a new schedule.
          expect((await t.request({ method: 'GET', url: '/api/schedules', token })).json()).toEqual({ schedules: [], total: 0 });
          for (const [method, payload] of [['GET', undefined], ['PUT', { enabled: false }], ['DELETE', undefined]] as const) {
            expect((await t.request({ method, url: `/api/schedules/${schedule.json().id}`, token, ...(payload ? { payload } : {}) })).json().error.code, method).toBe('not_found');
          }
          const guessed = await t.request({ method: 'POST', url: '/api/schedules', token, payload: { source_type: 'connector', source_id: id, cron: '0 4 * * *' } });
          expect(guessed.json().error).toMatchObject({ code: 'unknown_source', field: 'body.source_id' });
        }
        const probes = [
          ['GET', `/api/connectors/${id}`], ['PUT', `/api/connectors/${id}`], ['POST', `/api/connectors/${id}/scan`], ['DELETE', `/api/connectors/${id}`],
          ['GET', `/api/integrations/${siteId}`], ['PUT', `/api/integrations/${siteId}`], ['POST', `/api/integrations/${siteId}/sync`], ['DELETE', `/api/integrations/${siteId}`],
          // What other plugins keep per source: its metadata rules and its analytics.
          ['GET', `/api/metadata/${id}/rules`], ['POST', `/api/metadata/${siteId}/test-rule`], ['GET', `/api/analytics/${id}/chunk-size-distribution`], ['GET', `/api/analytics/${siteId}/metadata-coverage`],
        ] as const;
        for (const [method, url] of probes) {
          const payload = method === 'PUT' ? { name: 'Renamed' } : url.endsWith('/test-rule') ? { pattern: '(\\d+)', text: 'a 1' } : undefined;
          const res = await t.request({ method, url, token, ...(payload ? { payload } : {}) });
          // Viewers and editors meet the role check first on admin routes; no answer names the source.
          const expected = res.statusCode === 403 ? 'role_required' : 'not_found';
          expect([404, 403], `${role} ${method} ${url}`).toContain(res.statusCode);
          expect(res.json().error.code, `${role} ${method} ${url}`).toBe(expected);
          if (role === 'admin' || method === 'GET' || (role === 'editor' && method === 'POST')) expect(res.statusCode, `${role} ${method} ${url}`).toBe(404);
          expect(res.body).not.toContain('Finance');
        }
      }
      // Nothing the outsiders tried changed the sources.
      expect((await t.request({ method: 'GET', url: `/api/connectors/${id}`, token: admin })).json()).toMatchObject({ name: 'Finance', document_count: 3 });
      expect((await t.request({ method: 'GET', url: `/api/integrations/${siteId}`, token: admin })).json()).toMatchObject({ name: 'Finance wiki' });
      expect((await t.request({ method: 'GET', url: `/api/schedules/${schedule.json().id}`, token: admin })).json()).toMatchObject({ enabled: true, cron: '0 3 * * *' });
      expect((await t.request({ method: 'GET', url: '/api/schedules', token: admin })).json().total).toBe(1);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
