import type { ComponentChildren, TargetedMouseEvent } from 'preact';
import { createStore } from '../store';

/** The browser's location as a store: pushState navigation, no library. */
export interface Location {
  path: string;
  search: URLSearchParams;
}

const read = (): Location => ({ path: window.location.pathname, search: new URLSearchParams(window.location.search) });

export const currentLocation = createStore<Location>(read());
window.addEventListener('popstate', () => currentLocation.set(read()));

export function navigate(to: string, { replace = false }: { replace?: boolean } = {}): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  currentLocation.set(read());
}

/** A pattern such as /chat/:id matched against a path; the params, or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const source = pattern.replace(/:(\w+)/g, (_match, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const match = new RegExp(`^${source}/?$`).exec(path);
  if (!match) return null;
  return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1])]));
}

interface LinkProps {
  href: string;
  children?: ComponentChildren;
  class?: string;
  title?: string;
  'aria-current'?: 'page';
  'aria-label'?: string;
  onClick?: (event: TargetedMouseEvent<HTMLAnchorElement>) => void;
}

/** An <a> that navigates in the page (a modified click still opens a new tab). */
export function Link({ href, children, onClick, ...rest }: LinkProps) {
  const follow = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={follow} {...rest}>
      {children}
    </a>
  );
}
