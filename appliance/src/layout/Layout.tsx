import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { branding, logoSrc } from '../branding/branding';
import { DefaultPasswordBanner } from '../default-password/DefaultPasswordBanner';
import { Link } from '../router/router';
import { HOME } from '../routes';
import { type SessionState, signOut } from '../session/session';
import { useStore } from '../store';
import { Nav } from './Nav';

interface Props {
  state: SessionState & { status: 'signed-in' };
  path: string;
  children: ComponentChildren;
}

/** The signed-in frame: header, the role- and tier-aware nav, and the page. */
export function Layout({ state, path, children }: Props) {
  const brand = useStore(branding);
  const [menuOpen, setMenuOpen] = useState(false);
  const user = state.user!;
  const logo = logoSrc(brand);
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <div class="app">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="site-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <Link href={HOME} class="brand">
          {logo && <img src={logo} alt="" class="brand-logo" />}
          <span class="brand-name">{brand.app_name}</span>
        </Link>
        {brand.tagline && <span class="tagline">{brand.tagline}</span>}
        <div class="user-menu">
          <span class="user-name">
            {user.username} <span class="role">({user.role})</span>
          </span>
          <button type="button" class="button-quiet on-accent" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <div class="shell">
        <nav id="site-nav" class={menuOpen ? 'site-nav open' : 'site-nav'} aria-label="Main">
          <Nav role={user.role} tier={state.tier} path={path} onNavigate={() => setMenuOpen(false)} />
        </nav>
        <main id="main" tabIndex={-1}>
          {state.defaultPassword && <DefaultPasswordBanner />}
          {children}
        </main>
      </div>
    </div>
  );
}
