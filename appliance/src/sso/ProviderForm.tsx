import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { CheckboxField, TextAreaField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useSubmit } from '../components/useSubmit';
import { callbackUrl, createProvider, type Provider, type ProviderFields, updateProvider } from './api';

const FIELDS = ['body.name', 'body.display_name', 'body.client_id', 'body.client_secret', 'body.discovery_url', 'body.redirect_uri', 'body.scopes', 'body.admin_groups', 'body.allow_private_network'];

interface Props {
  provider?: Provider;
  onSaved: (provider: Provider) => void;
  onClose: () => void;
}

/** Create or edit an identity provider (admin, ENTERPRISE). The stored client secret is never shown: it is kept, replaced or removed. */
export function ProviderForm({ provider, onSaved, onClose }: Props) {
  const [name, setName] = useState(provider?.name ?? '');
  const [displayName, setDisplayName] = useState(provider?.display_name ?? '');
  const [clientId, setClientId] = useState(provider?.client_id ?? '');
  const [secret, setSecret] = useState('');
  const [removeSecret, setRemoveSecret] = useState(false);
  const [discoveryUrl, setDiscoveryUrl] = useState(provider?.discovery_url ?? '');
  // Follows the name until typed in: the callback URL a new provider needs is this origin's.
  const [redirectUri, setRedirectUri] = useState<string | null>(provider?.redirect_uri ?? null);
  const [scopes, setScopes] = useState(provider?.scopes ?? 'openid email profile');
  const [adminGroups, setAdminGroups] = useState(provider?.admin_groups.join('\n') ?? '');
  const [privateNetwork, setPrivateNetwork] = useState(provider?.allow_private_network ?? false);

  const { busy, error, submit } = useSubmit(() => {
    const fields: ProviderFields = {
      name: name.trim(),
      display_name: displayName.trim(),
      client_id: clientId.trim(),
      discovery_url: discoveryUrl.trim(),
      redirect_uri: (redirectUri ?? callbackUrl(name.trim())).trim(),
      scopes: scopes.trim().replace(/\s+/g, ' '),
      admin_groups: adminGroups.split(/[\n,]/).map((group) => group.trim()).filter(Boolean),
      allow_private_network: privateNetwork,
    };
    if (secret) fields.client_secret = secret;
    else if (removeSecret) fields.client_secret = null;
    return provider ? updateProvider(provider.id, fields) : createProvider(fields);
  }, onSaved);
  const errors = formErrors(error, FIELDS);

  return (
    <Dialog title={provider ? 'Edit identity provider' : 'New identity provider'} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        {errors.general && <Alert kind="error">{errors.general}</Alert>}
        <div class="two-columns">
          <TextField label="Name" required maxLength={63} pattern="[a-z0-9][a-z0-9_\-]*" autoCapitalize="none" spellcheck={false} value={name} onValue={setName} hint="Lower case letters, digits, - and _; part of the callback URL." error={errors.field('body.name')} />
          <TextField label="Button text" required maxLength={64} value={displayName} onValue={setDisplayName} hint="Shown on the sign-in page." error={errors.field('body.display_name')} />
        </div>
        <TextField label="Discovery URL" type="url" required spellcheck={false} value={discoveryUrl} onValue={setDiscoveryUrl} hint="The issuer's /.well-known/openid-configuration (https)." error={errors.field('body.discovery_url')} />
        <CheckboxField
          label="The identity provider is on the local network"
          checked={privateNetwork}
          onChecked={setPrivateNetwork}
          hint="Allows private, loopback and link-local addresses for its discovery, keys and token endpoints. Cloud metadata addresses stay refused."
          error={errors.field('body.allow_private_network')}
        />
        <TextField label="Client ID" required autoComplete="off" spellcheck={false} value={clientId} onValue={setClientId} error={errors.field('body.client_id')} />
        <TextField
          label={provider?.secret_set ? 'New client secret' : 'Client secret'}
          type="password"
          autoComplete="new-password"
          value={secret}
          onValue={setSecret}
          hint={provider?.secret_set ? 'A secret is set and is never shown. Leave this empty to keep it.' : 'Stored encrypted and never shown again. Leave empty for a public client.'}
          error={errors.field('body.client_secret')}
        />
        {provider?.secret_set && !secret && <CheckboxField label="Remove the stored secret" checked={removeSecret} onChecked={setRemoveSecret} />}
        <TextField
          label="Redirect URI"
          type="url"
          required
          spellcheck={false}
          value={redirectUri ?? callbackUrl(name.trim())}
          onValue={setRedirectUri}
          hint="Register this address with the identity provider."
          error={errors.field('body.redirect_uri')}
        />
        <TextField label="Scopes" required spellcheck={false} value={scopes} onValue={setScopes} hint="Separated by spaces; must include openid." error={errors.field('body.scopes')} />
        <TextAreaField label="Admin groups" rows={3} spellcheck={false} value={adminGroups} onValue={setAdminGroups} hint="One per line: members become admins at their first sign-in; everyone else starts as a viewer." error={errors.field('body.admin_groups')} />
        <FormButtons busy={busy} label={provider ? 'Save changes' : 'Create provider'} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
