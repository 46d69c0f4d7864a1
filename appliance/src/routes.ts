import type { ComponentType } from 'preact';
import type { Role, Tier } from './api/types';

/**
 * Every page of the UI: its path, title, who may open it, and its nav entry. A page is a folder under src/
 * with a default-exported component, loaded on first visit; a new feature adds a folder and a line here.
 */
export interface PageProps {
  params: Record<string, string>;
  route: AppRoute;
}

export type PageModule = { default: ComponentType<PageProps> };

export type NavSection = 'Ask' | 'Library' | 'System' | 'Admin';

export interface AppRoute {
  path: string;
  title: string;
  load: () => Promise<PageModule>;
  /** 'anonymous': signed-out visitors only; 'public': anyone; else the role and tier the page's API calls need. */
  access: 'anonymous' | 'public' | { role: Role; tier?: Tier };
  nav?: { label: string; section: NavSection };
}

/** One loader for both chat paths: the page stays mounted when a new conversation gets its URL. */
const chat = () => import('./chat/ChatPage');
const viewer = { role: 'viewer' } as const;
const admin = { role: 'admin' } as const;

export const routes: AppRoute[] = [
  { path: '/sign-in', title: 'Sign in', access: 'anonymous', load: () => import('./sign-in/SignInPage') },
  { path: '/forgot-password', title: 'Forgot password', access: 'anonymous', load: () => import('./sign-in/ForgotPasswordPage') },
  { path: '/reset-password', title: 'Choose a new password', access: 'public', load: () => import('./sign-in/ResetPasswordPage') },

  { path: '/chat', title: 'Chat', access: viewer, load: chat, nav: { label: 'Chat', section: 'Ask' } },
  { path: '/chat/:conversationId', title: 'Chat', access: viewer, load: chat },
  { path: '/search', title: 'Search', access: viewer, load: () => import('./search/SearchPage'), nav: { label: 'Search', section: 'Ask' } },

  { path: '/documents', title: 'Documents', access: viewer, load: () => import('./documents/DocumentsPage'), nav: { label: 'Documents', section: 'Library' } },
  { path: '/connectors', title: 'Connectors', access: viewer, load: () => import('./connectors/ConnectorsPage'), nav: { label: 'Connectors', section: 'Library' } },
  { path: '/integrations', title: 'Integrations', access: viewer, load: () => import('./integrations/IntegrationsPage'), nav: { label: 'Integrations', section: 'Library' } },
  // Readable on every plan: after a downgrade the kept rules are listed as inactive.
  { path: '/metadata', title: 'Metadata rules', access: viewer, load: () => import('./metadata/MetadataPage'), nav: { label: 'Metadata rules', section: 'Library' } },
  { path: '/analytics', title: 'Analytics', access: { role: 'viewer', tier: 'PRO' }, load: () => import('./analytics/AnalyticsPage'), nav: { label: 'Analytics', section: 'Library' } },

  { path: '/jobs', title: 'Jobs', access: viewer, load: () => import('./jobs/JobsPage'), nav: { label: 'Jobs', section: 'System' } },
  { path: '/index', title: 'Search index', access: viewer, load: () => import('./search-index/IndexPage'), nav: { label: 'Search index', section: 'System' } },
  { path: '/system', title: 'Health, hardware and models', access: viewer, load: () => import('./system/SystemPage'), nav: { label: 'Health & hardware', section: 'System' } },
  { path: '/account', title: 'My account', access: viewer, load: () => import('./account/AccountPage'), nav: { label: 'My account', section: 'System' } },

  { path: '/admin/users', title: 'Users', access: admin, load: () => import('./users/UsersPage'), nav: { label: 'Users', section: 'Admin' } },
  { path: '/admin/groups', title: 'Groups', access: { role: 'admin', tier: 'ENTERPRISE' }, load: () => import('./groups/GroupsPage'), nav: { label: 'Groups', section: 'Admin' } },
  { path: '/admin/sign-in', title: 'Sign-in and sessions', access: admin, load: () => import('./auth-settings/AuthSettingsPage'), nav: { label: 'Sign-in & sessions', section: 'Admin' } },
  { path: '/admin/sso', title: 'Single sign-on', access: { role: 'admin', tier: 'ENTERPRISE' }, load: () => import('./sso/SsoPage'), nav: { label: 'Single sign-on', section: 'Admin' } },
  { path: '/admin/branding', title: 'Branding', access: admin, load: () => import('./branding/BrandingPage'), nav: { label: 'Branding', section: 'Admin' } },
  { path: '/admin/schedules', title: 'Schedules', access: { role: 'admin', tier: 'PRO' }, load: () => import('./schedules/SchedulesPage'), nav: { label: 'Schedules', section: 'Admin' } },
  { path: '/admin/audit', title: 'Audit log', access: { role: 'admin', tier: 'ENTERPRISE' }, load: () => import('./audit/AuditPage'), nav: { label: 'Audit log', section: 'Admin' } },
  { path: '/admin/licence', title: 'Licence', access: admin, load: () => import('./license/LicensePage'), nav: { label: 'Licence', section: 'Admin' } },
];

export const HOME = '/chat';
