import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID Provider (oidc-provider) on a random loopback port, with devInteractions for login and consent.
 * Its signing key is the test's, so a test can have the token endpoint return an ID token with a changed claim
 * (re-signed with the IdP's key) or signed by another key; it can also point discovery's endpoints elsewhere.
 */

export interface IdpAccount {
  email?: string;
  preferred_username?: string;
  groups?: string[];
}

/** How the next ID tokens are forged: claims replaced (still signed by the IdP), or signed by a key the IdP never published. */
export interface IdTokenForgery {
  claims?: Record<string, unknown>;
  foreignKey?: boolean;
}

export interface TestIdp {
  issuer: string;
  discoveryUrl: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by sub; tests may change claims between logins. */
  accounts: Map<string, IdpAccount>;
  /** Plays the browser at the IdP: from the authorization URL to the redirect back to Hearth. */
  authorize: (authorizationUrl: string, sub: string, options?: { abort?: boolean }) => Promise<URL>;
  /** The code_verifier of every token request the IdP answered, in order. */
  tokenRequests: { codeVerifier: unknown }[];
  /** Forges every ID token the token endpoint issues from now on (until reset). */
  forgeIdTokens: (forgery: IdTokenForgery) => void;
  /** Replaces endpoints in the discovery document from now on (until reset). */
  overrideDiscovery: (endpoints: Record<string, string>) => void;
  /** Back to the plain IdP: no forgery, no override, no recorded requests. */
  reset: () => void;
  close: () => Promise<void>;
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The ID token with its claims changed, signed RS256 with the given key (its header, kid included, kept). */
function forged(idToken: string, forgery: IdTokenForgery, idpKey: KeyObject, foreignKey: KeyObject): string {
  const [header, payload] = idToken.split('.');
  const claims = { ...JSON.parse(Buffer.from(payload, 'base64url').toString()), ...forgery.claims };
  const signingInput = `${header}.${base64url(claims)}`;
  const signature = sign('sha256', Buffer.from(signingInput), forgery.foreignKey ? foreignKey : idpKey);
  return `${signingInput}.${signature.toString('base64url')}`;
}

export const HEARTH_ORIGIN = 'http://hearth.test';
export const redirectUriFor = (provider: string) => `${HEARTH_ORIGIN}/api/auth/oidc/${provider}/callback`;

/** A minimal cookie jar: one loopback host, so names alone are enough. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      const expired = attributes.some((a) => /^\s*expires=.*1970/i.test(a) || /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/** `origin`: where Hearth runs (its callbacks are registered there); the browser tests pass the real service's. */
export async function startIdp(providerNames: string[], accounts: Record<string, IdpAccount>, { origin = HEARTH_ORIGIN }: { origin?: string } = {}): Promise<TestIdp> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'hearth';
  const clientSecret = 'idp-client-secret-4f8b2c9e7d1a6053';
  const accountMap = new Map(Object.entries(accounts));
  const idpKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const foreignKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const tokenRequests: TestIdp['tokenRequests'] = [];
  let forgery: IdTokenForgery | null = null;
  let discoveryOverride: Record<string, string> = {};

  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: providerNames.map((name) => `${origin}/api/auth/oidc/${name}/callback`),
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    async findAccount(_ctx, sub) {
      const account = accountMap.get(sub);
      return account && { accountId: sub, claims: async () => ({ sub, email_verified: true, ...account }) };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username'], groups: ['groups'] },
    features: { devInteractions: { enabled: true } },
    // Every client must use PKCE; oidc-provider 9 knows only S256 and refuses plain.
    pkce: { required: () => true },
    cookies: { keys: ['idp-cookie-signing-key'] },
    // Explicit lifetimes keep oidc-provider from printing a notice for each default it falls back to.
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    jwks: { keys: [{ ...idpKey.export({ format: 'jwk' }), kid: 'idp-key', use: 'sig', alg: 'RS256' }] },
  });
  // Runs after oidc-provider has answered, before the answer is sent.
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.oidc?.route === 'discovery' && body) Object.assign(body, discoveryOverride);
    if (ctx.oidc?.route === 'token' && body) {
      tokenRequests.push({ codeVerifier: ctx.oidc.params?.code_verifier });
      if (forgery && typeof body.id_token === 'string') body.id_token = forged(body.id_token, forgery, idpKey, foreignKey);
    }
  });
  server.on('request', provider.callback());

  const authorize: TestIdp['authorize'] = async (authorizationUrl, sub, options = {}) => {
    const jar = new CookieJar();
    let url = new URL(authorizationUrl);
    let init: RequestInit = {};
    for (let step = 0; step < 20; step++) {
      const response = await fetch(url, { ...init, redirect: 'manual', headers: { cookie: jar.header(), ...(init.headers ?? {}) } });
      jar.store(response);
      const location = response.headers.get('location');
      if (location) {
        const next = new URL(location, url);
        if (next.origin === new URL(origin).origin) return next; // back at Hearth (the origin its redirect URIs name)
        [url, init] = [next, {}];
        continue;
      }
      const html = await response.text();
      const action = html.match(/<form[^>]*action="([^"]+)"/)?.[1];
      const prompt = html.match(/name="prompt" value="(\w+)"/)?.[1];
      if (!action || !prompt) throw new Error(`IdP page without a form (${response.status}): ${html.slice(0, 300)}`);
      if (options.abort) {
        [url, init] = [new URL(html.match(/href="([^"]*\/abort)"/)![1], url), {}];
        continue;
      }
      const fields = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login: sub, password: 'anything' } : {}) });
      [url, init] = [new URL(action, url), { method: 'POST', body: fields, headers: { 'content-type': 'application/x-www-form-urlencoded' } }];
    }
    throw new Error('the IdP never redirected back to Hearth');
  };

  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    clientId,
    clientSecret,
    accounts: accountMap,
    authorize,
    tokenRequests,
    forgeIdTokens: (change) => void (forgery = change),
    overrideDiscovery: (endpoints) => void (discoveryOverride = endpoints),
    reset() {
      forgery = null;
      discoveryOverride = {};
      tokenRequests.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
