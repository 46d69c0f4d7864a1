import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useSubmit } from '../components/useSubmit';
import { ChangePasswordForm } from '../default-password/ChangePasswordForm';
import { defaultPasswordChanged, session, userChanged } from '../session/session';
import { useStore } from '../store';
import { changeEmail } from './api';
import { TotpSection } from './TotpSection';
import './account.css';

function EmailForm({ email }: { email: string | null }) {
  const [value, setValue] = useState(email ?? '');
  const [saved, setSaved] = useState(false);
  const { busy, error, submit } = useSubmit(() => (setSaved(false), changeEmail(value.trim())), (user) => (userChanged(user), setSaved(true)));
  const errors = formErrors(error, ['body.email']);
  return (
    <form class="stack narrow" onSubmit={submit}>
      {errors.general && <Alert kind="error">{errors.general}</Alert>}
      {saved && <Alert kind="success">Your email address was saved.</Alert>}
      <TextField label="Email" type="email" autoComplete="email" required value={value} onValue={setValue} hint="Used for password reset links." error={errors.field('body.email')} />
      <FormButtons busy={busy} label="Save email" />
    </form>
  );
}

/** The signed-in user's own account: email, password and two-step sign-in. */
export default function AccountPage() {
  const state = useStore(session);
  const user = state.user!;
  const [passwordChanged, setPasswordChanged] = useState(false);
  return (
    <section class="page stack">
      <h1 tabIndex={-1}>My account</h1>
      <dl class="facts">
        <dt>Username</dt>
        <dd>{user.username}</dd>
        <dt>Role</dt>
        <dd>{user.role}</dd>
        <dt>Signs in with</dt>
        <dd>{user.auth_source === 'oidc' ? 'Single sign-on' : 'A password'}</dd>
      </dl>
      <section class="stack" aria-labelledby="email-title">
        <h2 id="email-title">Email address</h2>
        <EmailForm email={user.email} />
      </section>
      {user.auth_source === 'local' && (
        <section class="stack narrow" aria-labelledby="password-title">
          <h2 id="password-title">Password</h2>
          {passwordChanged && <Alert kind="success">Your password was changed. Your other sessions were signed out.</Alert>}
          <ChangePasswordForm
            key={passwordChanged ? 'again' : 'first'}
            onChanged={(pair) => {
              defaultPasswordChanged(pair);
              setPasswordChanged(true);
            }}
          />
        </section>
      )}
      <section class="stack" aria-labelledby="totp-title">
        <h2 id="totp-title">Two-step sign-in</h2>
        <TotpSection user={user} tier={state.tier} />
      </section>
    </section>
  );
}
