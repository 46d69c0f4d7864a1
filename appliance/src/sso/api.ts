import { api } from '../api/client';

/** An OpenID Connect identity provider (README: OpenID Connect). The client secret is write-only: `secret_set` says whether one is stored. */
export interface Provider {
  id: string;
  name: string;
  display_name: string;
  client_id: string;
  secret_set: boolean;
  discovery_url: string;
  redirect_uri: string;
  scopes: string;
  admin_groups: string[];
  allow_private_network: boolean;
  created_at: string;
  updated_at: string;
}

export interface ProviderFields {
  name: string;
  display_name: string;
  client_id: string;
  discovery_url: string;
  redirect_uri: string;
  scopes: string;
  admin_groups: string[];
  allow_private_network: boolean;
  /** Omitted: keep the stored one; null: remove it. */
  client_secret?: string | null;
}

export interface ProviderTest {
  ok: boolean;
  issuer?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  jwks_uri?: string;
  error?: string;
}

const one = (id: string) => `/api/admin/oidc/providers/${encodeURIComponent(id)}`;

export const listProviders = () => api<Provider[]>('/api/admin/oidc/providers');
export const createProvider = (fields: ProviderFields) => api<Provider>('/api/admin/oidc/providers', { method: 'POST', body: fields });
export const updateProvider = (id: string, fields: ProviderFields) => api<Provider>(one(id), { method: 'PATCH', body: fields });
export const deleteProvider = (id: string) => api<void>(one(id), { method: 'DELETE' });
export const testProvider = (id: string) => api<ProviderTest>(`${one(id)}/test`, { method: 'POST' });

/** Where the identity provider sends the browser back, on this origin. */
export const callbackUrl = (name: string) => `${window.location.origin}/api/auth/oidc/${encodeURIComponent(name || '<name>')}/callback`;
