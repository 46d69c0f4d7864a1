import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CheckboxField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { formatDuration } from '../components/format';
import { FormButtons } from '../components/FormButtons';
import { LockedBadge } from '../components/LockedBadge';
import { useLoad } from '../components/useLoad';
import { useSubmit } from '../components/useSubmit';
import { session, sessionEnded, tierAtLeast } from '../session/session';
import { useStore } from '../store';
import { ACCESS_RANGE, type AuthSettings, authSettings, changeAuthSettings, REFRESH_RANGE, signEveryoneOut } from './api';

const FIELDS = ['body.access_token_seconds', 'body.refresh_token_seconds', 'body.access_token_seconds_admin', 'body.refresh_token_seconds_admin'];

/** "900 seconds = 15 min", or the allowed range when the input is not a number yet. */
function lifetimeHint(value: string, [min, max]: readonly [number, number]): string {
  const seconds = Number(value);
  const range = `${formatDuration(min)} to ${formatDuration(max)}`;
  return Number.isInteger(seconds) && seconds > 0 ? `${formatDuration(seconds)} (${range})` : range;
}

function LifetimesForm({ settings, enterprise, onSaved }: { settings: AuthSettings; enterprise: boolean; onSaved: (settings: AuthSettings) => void }) {
  const [access, setAccess] = useState(String(settings.access_token_seconds));
  const [refresh, setRefresh] = useState(String(settings.refresh_token_seconds));
  const [override, setOverride] = useState(settings.access_token_seconds_admin !== null || settings.refresh_token_seconds_admin !== null);
  const [adminAccess, setAdminAccess] = useState(String(settings.access_token_seconds_admin ?? settings.access_token_seconds));
  const [adminRefresh, setAdminRefresh] = useState(String(settings.refresh_token_seconds_admin ?? settings.refresh_token_seconds));
  const [saved, setSaved] = useState(false);
  const { busy, error, submit } = useSubmit(
    () => {
      setSaved(false);
      const patch: Partial<AuthSettings> = { access_token_seconds: Number(access), refresh_token_seconds: Number(refresh) };
      // The overrides are an ENTERPRISE feature: a lower plan sends none (the service would refuse the whole change).
      if (enterprise) {
        patch.access_token_seconds_admin = override ? Number(adminAccess) : null;
        patch.refresh_token_seconds_admin = override ? Number(adminRefresh) : null;
      }
      return changeAuthSettings(patch);
    },
    (next) => (setSaved(true), onSaved(next)),
  );
  const errors = formErrors(error, FIELDS);
  return (
    <form class="stack narrow" onSubmit={submit}>
      {errors.general && <Alert kind="error">{errors.general}</Alert>}
      {saved && <Alert kind="success">Saved. New lifetimes apply to tokens issued from now on.</Alert>}
      <TextField label="Access token lifetime (seconds)" type="number" inputMode="numeric" required value={access} onValue={setAccess} hint={lifetimeHint(access, ACCESS_RANGE)} error={errors.field('body.access_token_seconds')} />
      <TextField label="Refresh token lifetime (seconds)" type="number" inputMode="numeric" required value={refresh} onValue={setRefresh} hint={lifetimeHint(refresh, REFRESH_RANGE)} error={errors.field('body.refresh_token_seconds')} />
      <fieldset class="stack" disabled={!enterprise}>
        <legend>
          Admin lifetimes
          {!enterprise && <LockedBadge tier="ENTERPRISE" />}
        </legend>
        {!enterprise && <p class="hint">Separate lifetimes for admin accounts need the ENTERPRISE plan.</p>}
        <CheckboxField label="Give admins their own lifetimes" checked={override} onChecked={setOverride} disabled={!enterprise} />
        {override && (
          <>
            <TextField label="Admin access token lifetime (seconds)" type="number" inputMode="numeric" required value={adminAccess} onValue={setAdminAccess} hint={lifetimeHint(adminAccess, ACCESS_RANGE)} error={errors.field('body.access_token_seconds_admin')} disabled={!enterprise} />
            <TextField label="Admin refresh token lifetime (seconds)" type="number" inputMode="numeric" required value={adminRefresh} onValue={setAdminRefresh} hint={lifetimeHint(adminRefresh, REFRESH_RANGE)} error={errors.field('body.refresh_token_seconds_admin')} disabled={!enterprise} />
          </>
        )}
      </fieldset>
      <FormButtons busy={busy} label="Save lifetimes" />
    </form>
  );
}

/** Token lifetimes and the sign-everyone-out switch (admin). */
export default function AuthSettingsPage() {
  const { tier } = useStore(session);
  const { value: settings, error, set: setSettings } = useLoad(authSettings);
  const [confirming, setConfirming] = useState(false);

  return (
    <section class="page stack">
      <h1 tabIndex={-1}>Sign-in and sessions</h1>
      <section class="stack" aria-labelledby="lifetimes-title">
        <h2 id="lifetimes-title">Token lifetimes</h2>
        <p class="muted">An access token proves a session for a short while; the refresh token renews it until the session ends. Shorter is safer, longer asks people to sign in less often.</p>
        {error && <Alert kind="error">{error}</Alert>}
        {settings === null && !error && <p class="loading">Loading…</p>}
        {settings && <LifetimesForm settings={settings} enterprise={tierAtLeast(tier, 'ENTERPRISE')} onSaved={setSettings} />}
      </section>
      <section class="stack narrow" aria-labelledby="everyone-title">
        <h2 id="everyone-title">Sign everyone out</h2>
        <p>Ends every session of every user, yours included: after a leaked password or a lost device. Everyone signs in again.</p>
        <div>
          <button type="button" class="button-danger" onClick={() => setConfirming(true)}>
            Sign everyone out
          </button>
        </div>
      </section>
      {confirming && (
        <ConfirmDialog
          title="Sign everyone out?"
          confirmLabel="Sign everyone out"
          onClose={() => setConfirming(false)}
          onConfirm={async () => {
            await signEveryoneOut();
            sessionEnded('Everyone was signed out, you included. Sign in again.');
          }}
        >
          <p>Every session of every user ends at its next request, including this one.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
