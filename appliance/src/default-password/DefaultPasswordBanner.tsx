import { useState } from 'preact/hooks';
import { defaultPasswordChanged } from '../session/session';
import { ChangePasswordForm } from './ChangePasswordForm';

/** While the documented default admin password is in force: a warning and the form to change it. */
export function DefaultPasswordBanner() {
  const [open, setOpen] = useState(false);
  return (
    <section class="banner banner-warning" aria-labelledby="default-password-title">
      <h2 id="default-password-title">Change the default admin password</h2>
      <p>This account still uses the documented default password. Anyone who has read the manual can sign in as admin: change it before the service is reachable from the network.</p>
      {open ? (
        <ChangePasswordForm onChanged={defaultPasswordChanged} />
      ) : (
        <button type="button" class="button-primary" onClick={() => setOpen(true)}>
          Change it now
        </button>
      )}
    </section>
  );
}
