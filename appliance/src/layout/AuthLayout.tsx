import type { ComponentChildren } from 'preact';
import { branding, logoSrc } from '../branding/branding';
import { useStore } from '../store';

/** The signed-out frame (sign-in, password reset): the branding and one card. */
export function AuthLayout({ children }: { children: ComponentChildren }) {
  const brand = useStore(branding);
  const logo = logoSrc(brand);
  return (
    <div class="auth-page">
      <main id="main" class="auth-card" tabIndex={-1}>
        <div class="auth-brand">
          {logo && <img src={logo} alt="" class="brand-logo" />}
          <p class="brand-name">{brand.app_name}</p>
          {brand.tagline && <p class="tagline">{brand.tagline}</p>}
        </div>
        {children}
      </main>
    </div>
  );
}
