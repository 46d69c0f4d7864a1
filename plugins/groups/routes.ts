import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AccessBody, AccessView, GroupBody, GroupIdParams, GroupList, GroupView, MemberList, MemberParams, SourceParams } from './schemas.js';
import type { AccessSource } from './repository.js';

const editor = { access: { role: 'editor' as const, tier: 'ENTERPRISE' as const } };
const admin = { access: { role: 'admin' as const, tier: 'ENTERPRISE' as const } };
const tags = ['groups'];

/** Groups and members (admins), and the allowed groups of documents and sources (editors). */
export const groupsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/groups', {
    config: editor,
    schema: { summary: 'List groups', description: 'everyone comes first.', tags, response: { 200: GroupList } },
  }, async () => ({ groups: await app.groups.list() }));

  app.post('/api/groups', {
    config: admin,
    schema: { summary: 'Create a group', tags, body: GroupBody, response: { 201: GroupView } },
  }, async (request, reply) => {
    const group = await app.groups.create(request.body.name);
    request.log.info({ event: 'group.create', group: group.id }, 'group created');
    await app.audit.record(request, { event: 'group.create', target: group.id, details: { name: group.name } });
    return reply.code(201).send(group);
  });

  app.get('/api/groups/:id', {
    config: editor,
    schema: { summary: 'Get a group', tags, params: GroupIdParams, response: { 200: GroupView } },
  }, async (request) => app.groups.get(request.params.id));

  app.put('/api/groups/:id', {
    config: admin,
    schema: { summary: 'Rename a group', description: 'Members and document access follow the new name. everyone cannot be renamed (409 builtin_group).', tags, params: GroupIdParams, body: GroupBody, response: { 200: GroupView } },
  }, async (request) => {
    const group = await app.groups.rename(request.params.id, request.body.name);
    request.log.info({ event: 'group.rename', group: group.id }, 'group renamed');
    await app.audit.record(request, { event: 'group.rename', target: group.id, details: { name: group.name } });
    return group;
  });

  app.delete('/api/groups/:id', {
    config: admin,
    schema: {
      summary: 'Delete a group',
      description: 'Its members leave it and documents lose it. 409 builtin_group for everyone; 409 group_in_use while a document or source is readable by this group alone.',
      tags, params: GroupIdParams, response: { 204: Type.Null() },
    },
  }, async (request, reply) => {
    await app.groups.delete(request.params.id);
    request.log.info({ event: 'group.delete', group: request.params.id }, 'group deleted');
    await app.audit.record(request, { event: 'group.delete', target: request.params.id });
    return reply.code(204).send(null);
  });

  app.get('/api/groups/:id/members', {
    config: admin,
    schema: { summary: 'List the members of a group', tags, params: GroupIdParams, response: { 200: MemberList } },
  }, async (request) => ({ members: await app.groups.members(request.params.id) }));

  app.put('/api/groups/:id/members/:userId', {
    config: admin,
    schema: { summary: 'Add a user to a group', description: 'Idempotent.', tags, params: MemberParams, response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await app.groups.addMember(request.params.id, request.params.userId);
    request.log.info({ event: 'group.member.add', group: request.params.id, user: app.logPrivacy.user(request.params.userId) }, 'group member added');
    await app.audit.record(request, { event: 'group.member_add', target: request.params.id, details: { user_id: request.params.userId } });
    return reply.code(204).send(null);
  });

  app.delete('/api/groups/:id/members/:userId', {
    config: admin,
    schema: { summary: 'Remove a user from a group', description: 'Takes effect on their next query.', tags, params: MemberParams, response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await app.groups.removeMember(request.params.id, request.params.userId);
    request.log.info({ event: 'group.member.remove', group: request.params.id, user: app.logPrivacy.user(request.params.userId) }, 'group member removed');
    await app.audit.record(request, { event: 'group.member_remove', target: request.params.id, details: { user_id: request.params.userId } });
    return reply.code(204).send(null);
  });

  app.put('/api/documents/:id/access', {
    config: editor,
    schema: {
      summary: "Set a document's allowed groups",
      description: 'Takes effect on the next query, without re-embedding. 404 when the caller cannot read the document.',
      tags, params: SourceParams, body: AccessBody, response: { 200: AccessView },
    },
  }, async (request) => {
    const reader = await app.groups.callerGroups(request);
    const groups = await app.groups.setDocumentGroups(request.params.id, request.body.groups, reader);
    request.log.info({ event: 'access.document', document: request.params.id, groups: groups.length }, 'document access changed');
    await app.audit.record(request, { event: 'access.document', target: request.params.id, details: { groups } });
    return { id: request.params.id, groups };
  });

  for (const source of ['connectors', 'integrations'] as const satisfies AccessSource[]) {
    app.get(`/api/${source}/:id/access`, {
      config: editor,
      schema: { summary: `The allowed groups of one of the ${source}' documents`, tags, params: SourceParams, response: { 200: AccessView } },
    }, async (request) => {
      const reader = await app.groups.callerGroups(request);
      return { id: request.params.id, groups: await app.groups.sourceGroups(source, request.params.id, reader) };
    });

    app.put(`/api/${source}/:id/access`, {
      config: editor,
      schema: {
        summary: `Set the allowed groups of one of the ${source}' documents`,
        description: 'Applies to the documents it brought in already and to those it brings in later; takes effect on the next query.',
        tags, params: SourceParams, body: AccessBody, response: { 200: AccessView },
      },
    }, async (request) => {
      const reader = await app.groups.callerGroups(request);
      const groups = await app.groups.setSourceGroups(source, request.params.id, request.body.groups, reader);
      request.log.info({ event: `access.${source}`, source: request.params.id, groups: groups.length }, 'source access changed');
      await app.audit.record(request, { event: `access.${source}`, target: request.params.id, details: { groups } });
      return { id: request.params.id, groups };
    });
  }
};
