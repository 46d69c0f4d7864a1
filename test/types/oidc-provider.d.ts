/** The slice of oidc-provider the OIDC tests use; @types/oidc-provider (dev) would replace this file. */
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';

  interface Account {
    accountId: string;
    claims: (use: string, scope: string) => Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients?: Record<string, unknown>[];
    findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined>;
    claims?: Record<string, string[]>;
    features?: Record<string, unknown>;
    pkce?: { required?: (ctx: unknown, client: unknown) => boolean };
    cookies?: { keys?: string[] };
    ttl?: Record<string, number>;
    jwks?: { keys: Record<string, unknown>[] };
  }

  /** What a pre/post middleware sees (Koa's context, with oidc-provider's own state). */
  interface MiddlewareContext {
    body: unknown;
    oidc?: { route?: string; params?: Record<string, unknown> };
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): RequestListener;
    use(middleware: (ctx: MiddlewareContext, next: () => Promise<void>) => Promise<void>): this;
  }
}
