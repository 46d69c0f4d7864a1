import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { TextField } from '../components/Field';
import { useSubmit } from '../components/useSubmit';
import { Link } from '../router/router';
import { forgotPassword } from './api';

export default function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const { busy, error, submit } = useSubmit(() => forgotPassword(email.trim()), (result) => setSent(result.message));

  return (
    <section class="stack">
      <h1 tabIndex={-1}>Forgot password</h1>
      {sent ? (
        <Alert kind="success">{sent}</Alert>
      ) : (
        <form class="stack" onSubmit={submit}>
          <p>Enter the email address of your account. If it belongs to a local account, a link to choose a new password is sent to it.</p>
          {error !== null && <Alert kind="error">{messageOf(error)}</Alert>}
          <TextField label="Email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
          <button type="submit" class="button-primary button-block" disabled={busy}>
            {busy ? 'Sending…' : 'Send the reset link'}
          </button>
        </form>
      )}
      <p>
        <Link href="/sign-in">Back to sign in</Link>
      </p>
    </section>
  );
}
