import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { branding } from './branding/branding';
import { AuthLayout } from './layout/AuthLayout';
import { RoleRequired, TierRequired } from './layout/AccessDenied';
import { Layout } from './layout/Layout';
import { NotFound } from './not-found/NotFound';
import { currentLocation, matchPath, navigate } from './router/router';
import { type AppRoute, HOME, type PageProps, routes } from './routes';
import { roleAtLeast, session, tierAtLeast } from './session/session';
import { useStore } from './store';

const loaded = new Map<AppRoute['load'], ComponentType<PageProps>>();
/** Routes that share a loader share a page instance (/chat and /chat/:id); others remount. */
const loaderKeys = new Map<AppRoute['load'], number>();
const pageKey = (route: AppRoute) => loaderKeys.get(route.load) ?? loaderKeys.set(route.load, loaderKeys.size).get(route.load)!;

/** Loads a page's folder on first visit, then renders it; the heading is focused for screen readers. */
function LazyPage({ route, params }: PageProps) {
  const [Page, setPage] = useState<ComponentType<PageProps> | undefined>(() => loaded.get(route.load));
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (Page) return;
    route.load().then(
      (module) => {
        loaded.set(route.load, module.default);
        setPage(() => module.default);
      },
      () => setFailed(true),
    );
  }, [route]);
  if (failed) return <p role="alert">This page could not be loaded. Reload to try again.</p>;
  return Page ? <Page route={route} params={params} /> : <p class="loading">Loading…</p>;
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

/** Only a path of this UI, never another origin ("//host" or a scheme), may follow a sign-in. */
const safeNext = (next: string | null) => (next && /^\/(?![/\\])/.test(next) ? next : HOME);

function resolve(path: string): { route: AppRoute; params: Record<string, string> } | null {
  for (const route of routes) {
    const params = matchPath(route.path, path);
    if (params) return { route, params };
  }
  return null;
}

/** Starts fetching the page of the address being opened while the session is still being resumed. */
export function prefetchPage(path: string): void {
  if (path === '/') return;
  void resolve(path)?.route.load().catch(() => undefined);
}

/** Moves focus to the new page's heading after navigation, as a full page load would for a screen reader. */
function useFocusOnNavigate(path: string): void {
  const [first, setFirst] = useState(true);
  useEffect(() => {
    if (first) return setFirst(false);
    const timer = setTimeout(() => (document.querySelector<HTMLElement>('#main h1') ?? document.querySelector<HTMLElement>('#main'))?.focus(), 50);
    return () => clearTimeout(timer);
  }, [path]);
}

export function App() {
  const state = useStore(session);
  const location = useStore(currentLocation);
  const brand = useStore(branding);
  const match = resolve(location.path);
  useFocusOnNavigate(location.path);
  useEffect(() => {
    document.title = match ? `${match.route.title} · ${brand.app_name}` : brand.app_name;
  }, [match?.route, brand.app_name]);

  if (state.status === 'loading') return <p class="loading splash">Loading…</p>;
  const signedIn = state.status === 'signed-in';

  if (location.path === '/') return <Redirect to={signedIn ? HOME : '/sign-in'} />;
  if (match?.route.access === 'anonymous' && signedIn) return <Redirect to={safeNext(location.search.get('next'))} />;
  if (!signedIn && match?.route.access !== 'anonymous' && match?.route.access !== 'public') {
    return <Redirect to={`/sign-in?next=${encodeURIComponent(location.path)}`} />;
  }
  if (!signedIn) {
    return <AuthLayout>{match ? <LazyPage key={pageKey(match.route)} {...match} /> : <NotFound />}</AuthLayout>;
  }

  let content;
  if (!match) content = <NotFound />;
  else if (typeof match.route.access === 'object' && !roleAtLeast(state.user!.role, match.route.access.role)) {
    content = <RoleRequired title={match.route.title} role={match.route.access.role} />;
  } else if (typeof match.route.access === 'object' && match.route.access.tier && !tierAtLeast(state.tier, match.route.access.tier)) {
    content = <TierRequired title={match.route.title} tier={match.route.access.tier} />;
  } else content = <LazyPage key={pageKey(match.route)} {...match} />;
  return (
    <Layout state={state as typeof state & { status: 'signed-in' }} path={location.path}>
      {content}
    </Layout>
  );
}
