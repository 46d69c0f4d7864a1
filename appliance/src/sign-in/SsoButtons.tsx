import { useEffect, useState } from 'preact/hooks';
import type { OidcProviderButton } from '../api/types';
import { markSsoPending } from '../session/session';
import { ssoProviders } from './api';

/** Only the service's own login path is followed, whatever a provider's record says. */
const isLoginPath = (url: string) => /^\/api\/auth\/oidc\/[^/?#]+\/login$/.test(url);

/** One button per identity provider (GET /api/auth/oidc/providers); names are the admin's text, shown as text. */
export function SsoButtons() {
  const [providers, setProviders] = useState<OidcProviderButton[]>([]);
  useEffect(() => {
    ssoProviders().then((list) => setProviders(list.filter((provider) => isLoginPath(provider.login_url))), () => setProviders([]));
  }, []);
  if (!providers.length) return null;
  return (
    <section class="sso" aria-label="Single sign-on">
      <p class="divider">or</p>
      {providers.map((provider) => (
        <button
          type="button"
          class="button-secondary button-block"
          key={provider.name}
          onClick={() => {
            markSsoPending();
            window.location.assign(provider.login_url);
          }}
        >
          Sign in with {provider.display_name}
        </button>
      ))}
    </section>
  );
}
