import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { CheckboxField, SelectField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useSubmit } from '../components/useSubmit';
import { type Credentials, createIntegration, type Integration, type IntegrationFields, updateIntegration } from './api';

const FIELDS = [
  'body.name',
  'body.config.start_url',
  'body.config.sitemap_url',
  'body.config.max_depth',
  'body.config.max_pages',
  'body.config.allow_private_network',
  'body.config.user_agent',
  'body.credentials',
  'body.enabled',
];

/** Stored credentials are never shown: an edit keeps them, replaces them or removes them. */
type CredentialChoice = 'keep' | 'none' | 'basic' | 'bearer';

interface Props {
  integration?: Integration;
  onSaved: (integration: Integration) => void;
  onClose: () => void;
}

function credentialsOf(choice: CredentialChoice, username: string, password: string, token: string): Credentials | null | undefined {
  if (choice === 'keep') return undefined;
  if (choice === 'basic') return { username, password };
  if (choice === 'bearer') return { bearer_token: token.trim() };
  return null;
}

/** Create or edit a website integration (admin): the fields of POST/PUT /api/integrations. */
export function IntegrationForm({ integration, onSaved, onClose }: Props) {
  const config = integration?.config;
  const [name, setName] = useState(integration?.name ?? '');
  const [startUrl, setStartUrl] = useState(config?.start_url ?? '');
  const [sitemapUrl, setSitemapUrl] = useState(config?.sitemap_url ?? '');
  const [maxDepth, setMaxDepth] = useState(String(config?.max_depth ?? 2));
  const [maxPages, setMaxPages] = useState(String(config?.max_pages ?? 200));
  const [privateNetwork, setPrivateNetwork] = useState(config?.allow_private_network ?? false);
  const [userAgent, setUserAgent] = useState(config?.user_agent ?? '');
  const [enabled, setEnabled] = useState(integration?.enabled ?? true);
  const [choice, setChoice] = useState<CredentialChoice>(integration?.credentials_set ? 'keep' : 'none');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');

  const { busy, error, submit } = useSubmit(() => {
    const fields: IntegrationFields = {
      name: name.trim(),
      enabled,
      config: {
        ...(startUrl.trim() ? { start_url: startUrl.trim() } : {}),
        ...(sitemapUrl.trim() ? { sitemap_url: sitemapUrl.trim() } : {}),
        max_depth: Number(maxDepth),
        max_pages: Number(maxPages),
        allow_private_network: privateNetwork,
        ...(userAgent.trim() ? { user_agent: userAgent.trim() } : {}),
      },
    };
    const credentials = credentialsOf(choice, username, password, token);
    // On create, "none" is simply no credentials; on edit it removes the stored ones.
    if (credentials !== undefined && (integration || credentials)) fields.credentials = credentials;
    return integration ? updateIntegration(integration.id, fields) : createIntegration(fields);
  }, onSaved);
  const errors = formErrors(error, FIELDS);

  const choices: [CredentialChoice, string][] = [
    ...(integration?.credentials_set ? ([['keep', 'Keep the stored credentials']] as [CredentialChoice, string][]) : []),
    ['none', integration?.credentials_set ? 'Remove the stored credentials' : 'None (a public site)'],
    ['basic', 'Username and password (HTTP Basic)'],
    ['bearer', 'Bearer token'],
  ];

  return (
    <Dialog title={integration ? 'Edit website' : 'New website'} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        {errors.general && <Alert kind="error">{errors.general}</Alert>}
        <TextField label="Name" required maxLength={100} value={name} onValue={setName} error={errors.field('body.name')} />
        <TextField
          label="Start address"
          type="url"
          value={startUrl}
          onValue={setStartUrl}
          spellcheck={false}
          hint="Where the crawl begins (http or https). A start address, a sitemap or both, on one site."
          error={errors.field('body.config.start_url')}
        />
        <TextField label="Sitemap address" type="url" value={sitemapUrl} onValue={setSitemapUrl} spellcheck={false} error={errors.field('body.config.sitemap_url')} />
        <div class="two-columns">
          <TextField label="Link depth" type="number" inputMode="numeric" required value={maxDepth} onValue={setMaxDepth} hint="0 to 10" error={errors.field('body.config.max_depth')} />
          <TextField label="Most pages" type="number" inputMode="numeric" required value={maxPages} onValue={setMaxPages} hint="1 to 10,000" error={errors.field('body.config.max_pages')} />
        </div>
        <CheckboxField
          label="Allow addresses on this network"
          checked={privateNetwork}
          onChecked={setPrivateNetwork}
          hint="For a site on the LAN (private, loopback or link-local addresses). Cloud metadata addresses stay refused."
          error={errors.field('body.config.allow_private_network')}
        />
        <TextField label="User agent (optional)" value={userAgent} onValue={setUserAgent} spellcheck={false} hint="Default: HearthBot with this release's version." error={errors.field('body.config.user_agent')} />
        <fieldset class="stack">
          <legend>Sign-in to the site</legend>
          {integration?.credentials_set && <p class="hint">Credentials are stored. They are never shown again.</p>}
          <SelectField label="Credentials" value={choice} onValue={setChoice} options={choices} error={errors.field('body.credentials')} />
          {choice === 'basic' && (
            <div class="two-columns">
              <TextField label="Site username" autoComplete="off" required value={username} onValue={setUsername} />
              <TextField label="Site password" type="password" autoComplete="new-password" required value={password} onValue={setPassword} />
            </div>
          )}
          {choice === 'bearer' && <TextField label="Bearer token" type="password" autoComplete="off" required value={token} onValue={setToken} />}
        </fieldset>
        <CheckboxField label="Enabled" checked={enabled} onChecked={setEnabled} hint="A disabled website refuses syncs." error={errors.field('body.enabled')} />
        <FormButtons busy={busy} label={integration ? 'Save changes' : 'Create website'} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
