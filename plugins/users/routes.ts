import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CreateUserBody, ListUsersQuery, UpdateUserBody, UserIdParams, UserList, UserView } from './schemas.js';
import { toUserView } from './service.js';

const admin = { access: { role: 'admin' as const } };

export const usersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/auth/users', {
    config: admin,
    schema: { summary: 'List users', tags: ['users'], querystring: ListUsersQuery, response: { 200: UserList } },
  }, async (request) => {
    const { users, total } = await app.users.list(request.query.limit, request.query.offset);
    return { users: users.map((user) => toUserView(user, app.entitlement)), total };
  });

  app.post('/api/auth/users', {
    config: admin,
    schema: { summary: 'Create a user', tags: ['users'], body: CreateUserBody, response: { 201: UserView } },
  }, async (request, reply) => {
    const user = await app.users.create(request.body);
    request.log.info({ user: app.logPrivacy.user(user.id), event: 'user.create' }, 'user created');
    await app.audit.record(request, { event: 'user.create', target: user.id, details: { username: user.username, role: user.role } });
    return reply.code(201).send(toUserView(user, app.entitlement));
  });

  app.get('/api/auth/users/:id', {
    config: admin,
    schema: { summary: 'Get a user', tags: ['users'], params: UserIdParams, response: { 200: UserView } },
  }, async (request) => toUserView(await app.users.get(request.params.id), app.entitlement));

  app.put('/api/auth/users/:id', {
    config: admin,
    schema: {
      summary: 'Update a user (password, role and/or email)',
      tags: ['users'],
      params: UserIdParams,
      body: UpdateUserBody,
      response: { 200: UserView },
    },
  }, async (request) => {
    const before = await app.users.get(request.params.id);
    const user = await app.users.update(request.params.id, request.body);
    if (user.role !== before.role) {
      await app.audit.record(request, { event: 'user.role_change', target: user.id, details: { username: user.username, from: before.role, to: user.role } });
    }
    return toUserView(user, app.entitlement);
  });

  app.delete('/api/auth/users/:id', {
    config: admin,
    schema: { summary: 'Delete a user', tags: ['users'], params: UserIdParams, response: { 204: Type.Null() } },
  }, async (request, reply) => {
    const user = await app.users.delete(request.params.id);
    request.log.info({ user: app.logPrivacy.user(user.id), event: 'user.delete' }, 'user deleted');
    await app.audit.record(request, { event: 'user.delete', target: user.id, details: { username: user.username } });
    return reply.code(204).send(null);
  });
};
