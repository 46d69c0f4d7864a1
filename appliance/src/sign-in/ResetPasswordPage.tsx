import { useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { TextField } from '../components/Field';
import { Link } from '../router/router';

import { resetPassword } from './api';

/** The link mailed by forgot-password: /reset-password?token=… The token leaves the address bar at once. */
export default function ResetPasswordPage() {
  const [token] = useState(() => new URLSearchParams(window.location.search).get('token') ?? '');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [invalidLink, setInvalidLink] = useState(!token);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  // A layout effect runs in the same task as the first render, before the page is painted or any other script
  // reads it: the token is never on screen in the address bar (useEffect waited for the next frame).
  useLayoutEffect(() => {
    if (window.location.search) history.replaceState(null, '', '/reset-password');
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (password !== repeat) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      await resetPassword(token, password);
      setDone(true);
    } catch (caught) {
      if (caught instanceof ApiError && caught.code === 'reset_token_invalid') setInvalidLink(true);
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <section class="stack">
        <h1 tabIndex={-1}>Password changed</h1>
        <Alert kind="success">Your password has been changed and your other sessions were signed out.</Alert>
        <p>
          <Link href="/sign-in">Sign in with the new password</Link>
        </p>
      </section>
    );
  }
  return (
    <section class="stack">
      <h1 tabIndex={-1}>Choose a new password</h1>
      {invalidLink ? (
        <>
          <Alert kind="error">{error ?? 'This reset link is incomplete.'} Reset links work once and for 30 minutes.</Alert>
          <p>
            <Link href="/forgot-password">Request a new link</Link>
          </p>
        </>
      ) : (
        <form class="stack" onSubmit={submit}>
          {error && <Alert kind="error">{error}</Alert>}
          <TextField label="New password" type="password" autoComplete="new-password" required minLength={12} value={password} onValue={setPassword} hint="At least 12 characters." />
          <TextField label="Repeat the new password" type="password" autoComplete="new-password" required value={repeat} onValue={setRepeat} />
          <button type="submit" class="button-primary button-block" disabled={busy}>
            {busy ? 'Saving…' : 'Set the new password'}
          </button>
        </form>
      )}
    </section>
  );
}
