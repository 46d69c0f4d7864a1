import { useState } from 'preact/hooks';
import { api, REFRESH_COOKIE_HEADER } from '../api/client';
import { ApiError, messageOf } from '../api/errors';
import type { TokenPair } from '../api/types';
import { Alert } from '../components/Alert';
import { TextField } from '../components/Field';

interface Props {
  /** The new token pair: the service ends every other session of the user and hands this one a fresh pair. */
  onChanged: (pair: TokenPair) => void;
}

/** PUT /api/auth/password: current password, new one twice. The service checks the policy (12+ characters…). */
export function ChangePasswordForm({ onChanged }: Props) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<ApiError | string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (next !== repeat) return setError('The two new passwords differ.');
    setBusy(true);
    setError(null);
    try {
      const pair = await api<TokenPair>('/api/auth/password', {
        method: 'PUT',
        body: { current_password: current, new_password: next },
        headers: REFRESH_COOKIE_HEADER,
      });
      onChanged(pair);
    } catch (caught) {
      setError(caught instanceof ApiError ? caught : messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (field: string) => (error instanceof ApiError && error.field === field ? error.message : undefined);
  const generalError = typeof error === 'string' ? error : error && !error.field ? error.message : null;
  return (
    <form class="stack" onSubmit={submit}>
      {generalError && <Alert kind="error">{generalError}</Alert>}
      <TextField label="Current password" type="password" autoComplete="current-password" required value={current} onValue={setCurrent} error={fieldError('body.current_password')} />
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        minLength={12}
        value={next}
        onValue={setNext}
        hint="At least 12 characters; not your username."
        error={fieldError('body.new_password')}
      />
      <TextField label="Repeat the new password" type="password" autoComplete="new-password" required value={repeat} onValue={setRepeat} />
      <div>
        <button type="submit" class="button-primary" disabled={busy}>
          {busy ? 'Changing…' : 'Change password'}
        </button>
      </div>
    </form>
  );
}
