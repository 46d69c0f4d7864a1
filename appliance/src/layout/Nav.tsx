import { LockedBadge } from '../components/LockedBadge';
import { Link } from '../router/router';
import { type AppRoute, type NavSection, routes } from '../routes';
import { roleAtLeast, tierAtLeast } from '../session/session';
import type { Role, Tier } from '../api/types';

const SECTIONS: NavSection[] = ['Ask', 'Library', 'System', 'Admin'];

interface Props {
  role: Role;
  tier: Tier;
  path: string;
  onNavigate: () => void;
}

/** The pages this role may open; one the plan does not include shows the tier it needs. */
export function Nav({ role, tier, path, onNavigate }: Props) {
  const visible = routes.filter((route): route is AppRoute & { nav: NonNullable<AppRoute['nav']> } => {
    if (!route.nav || typeof route.access === 'string') return false;
    return roleAtLeast(role, route.access.role);
  });
  return (
    <>
      {SECTIONS.map((section) => {
        const entries = visible.filter((route) => route.nav.section === section);
        if (!entries.length) return null;
        return (
          <div class="nav-section" key={section}>
            <h2 class="nav-heading">{section}</h2>
            <ul>
              {entries.map((route) => {
                const needs = typeof route.access === 'object' ? route.access.tier : undefined;
                const locked = needs && !tierAtLeast(tier, needs);
                const current = path === route.path || path.startsWith(`${route.path}/`);
                return (
                  <li key={route.path}>
                    <Link href={route.path} aria-current={current ? 'page' : undefined} onClick={onNavigate}>
                      {route.nav.label}
                      {locked && <LockedBadge tier={needs} />}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </div>
        );
      })}
    </>
  );
}
