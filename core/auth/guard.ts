import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { forbidden, unauthorized } from '../errors.js';
import { type Entitlement, type Tier, tierAtLeast } from '../tiers.js';
import type { TokenClaims, TokenService } from './tokens.js';

export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** What a route declares in `config.access`: public (no token; optionally only on a tier), or a minimum role and optionally a tier. */
export type Access = { public: true; tier?: Tier } | { role: Role; tier?: Tier };

export interface Principal {
  id: string;
  username: string;
  role: Role;
  email: string | null;
  groups: string[];
  /** The login session of the presented token. */
  sessionId: string;
}

/** Turns verified claims into the calling user, or throws 401 (unknown user, revoked token). */
export interface IdentityResolver {
  resolve(claims: TokenClaims): Promise<Principal>;
  /** The same answer when it is known without I/O (a fresh cache entry); undefined when resolve must run. */
  resolveCached(claims: TokenClaims): Principal | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    identity: IdentityResolver;
    tokens: TokenService;
    entitlement: Entitlement;
  }
}

function roleAtLeast(actual: Role, required: Role): boolean {
  return ROLES.indexOf(actual) >= ROLES.indexOf(required);
}

/** The one tier check; routes declare it, and field-level gates call it too. */
export function requireTier(entitlement: Entitlement, tier: Tier): void {
  if (!tierAtLeast(entitlement.tier(), tier)) {
    throw forbidden('tier_required', `This feature needs the ${tier} plan or higher (current plan: ${entitlement.tier()})`);
  }
}

/** The calling user of a protected route; the guard guarantees it is set there. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized();
  return request.principal;
}

function describeAccess(access: Access): string {
  if ('public' in access) return access.tier ? `Public. Tier: ${access.tier} or higher.` : 'Public.';
  return `Role: ${access.role} or higher. Tier: ${access.tier ?? 'FREE'} or higher.`;
}

function accessExtension(access: Access): unknown {
  if ('public' in access) return access.tier ? { public: true, tier: access.tier } : 'public';
  return { role: access.role, tier: access.tier ?? 'FREE' };
}

/** Puts the declared role and tier into the route's OpenAPI entry. */
function annotate(route: RouteOptions, access: Access): void {
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const isPublic = 'public' in access;
  route.schema = {
    ...schema,
    description: [schema.description, describeAccess(access)].filter(Boolean).join(' '),
    ...(isPublic ? {} : { security: [{ bearerAuth: [] }] }),
    'x-hearth-access': accessExtension(access),
    response: { '4xx': { $ref: 'ErrorBody#' }, '5xx': { $ref: 'ErrorBody#' }, ...(schema.response as object | undefined) },
  } as RouteOptions['schema'];
}

export interface DeclaredRoute {
  method: string;
  url: string;
  access: Access | undefined;
}

const seenRoutes = new WeakMap<FastifyInstance, RouteOptions[]>();

/** Every route of an app with its declared access (HEAD included), read-only: the route-table tests walk it. */
export function declaredRoutes(app: FastifyInstance): DeclaredRoute[] {
  return (seenRoutes.get(app) ?? []).flatMap((route) =>
    [route.method].flat().map((method) => ({ method: String(method), url: route.url, access: route.config?.access })),
  );
}

/**
 * The one role guard and the one tier guard. Every route must declare `config.access`;
 * a route that does not is refused at boot, and at run time it would fail closed.
 */
export const guard = fp(
  async function guard(app: FastifyInstance) {
    const undeclared: string[] = [];
    const routes: RouteOptions[] = [];
    seenRoutes.set(app, routes);

    app.decorateRequest('principal', null);

    const annotated = new WeakSet<RouteOptions>();

    const BEARER = /^Bearer\s+(\S+)$/i;

    const authorize = (request: FastifyRequest, principal: Principal, access: { role: Role; tier?: Tier }): void => {
      request.principal = principal;
      if (access.tier) requireTier(app.entitlement, access.tier);
      if (!roleAtLeast(principal.role, access.role)) {
        throw forbidden('role_required', `This action needs the ${access.role} role or higher`);
      }
    };

    /**
     * The check of one declared access: the bearer token, its user, the tier, then the role (a public
     * route: its tier only). Synchronous when the caller's identity is cached (nearly every request).
     */
    const enforce = (request: FastifyRequest, access: Access): void | Promise<void> => {
      if ('public' in access) return access.tier ? requireTier(app.entitlement, access.tier) : undefined;
      const token = request.headers.authorization?.match(BEARER)?.[1];
      if (!token) throw unauthorized();
      const claims = app.tokens.check(token, 'access');
      const cached = app.identity.resolveCached(claims);
      if (cached) return authorize(request, cached, access);
      return app.identity.resolve(claims).then((principal) => authorize(request, principal, access));
    };

    /** A callback-style hook: Fastify moves on at once when the check needed no I/O. */
    const hook = (check: (request: FastifyRequest) => void | Promise<void>) => (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
      let pending: void | Promise<void>;
      try {
        pending = check(request);
      } catch (error) {
        return done(error as Error);
      }
      if (pending) pending.then(() => done(), done);
      else done();
    };

    app.addHook('onRoute', (route) => {
      routes.push(route);
      const declared = route.config?.access;
      // The route's own first hook, bound to its declaration; access set by a later onRoute hook is read per request.
      const check = declared
        ? hook((request) => enforce(request, declared))
        : hook((request) => {
            const access = request.routeOptions.config.access;
            if (!access) throw forbidden('access_undeclared', 'This route is not available');
            return enforce(request, access);
          });
      route.onRequest = [check, ...[route.onRequest ?? []].flat()];
      // Annotating now lets Fastify compile the error responses; access set by a later onRoute hook is annotated at onReady.
      if (declared) {
        annotate(route, declared);
        annotated.add(route);
      }
    });

    app.addHook('onReady', async () => {
      for (const route of routes) {
        const access = route.config?.access;
        if (!access) undeclared.push(`${String(route.method)} ${route.url}`);
        else if (!annotated.has(route)) annotate(route, access);
      }
      if (undeclared.length) throw new Error(`routes without config.access: ${undeclared.join(', ')}`);
    });
  },
  { name: 'hearth-guard', dependencies: ['hearth-errors'] },
);
