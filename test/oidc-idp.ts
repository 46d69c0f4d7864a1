import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A real OpenID Provider (oidc-provider) on a random loopback port, with devInteractions for login and consent. */

export interface IdpAccount {
  email?: string;
  preferred_username?: string;
  groups?: string[];
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
  close: () => Promise<void>;
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
        if (next.origin === HEARTH_ORIGIN) return next;
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
