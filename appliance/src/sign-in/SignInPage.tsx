import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { ApiError } from '../api/errors';
import { branding } from '../branding/branding';
import { Alert } from '../components/Alert';
import { TextField } from '../components/Field';
import { useSubmit } from '../components/useSubmit';
import { currentLocation, Link } from '../router/router';
import { beginSession, DOCUMENTED_DEFAULT_PASSWORD, session } from '../session/session';
import { useStore } from '../store';
import { login, secondFactor } from './api';
import { SsoButtons } from './SsoButtons';
import { ssoErrorMessage } from './ssoError';

/** MFA token failures after which only a new password step helps (README: "each says to log in again"). */
const LOG_IN_AGAIN = new Set(['mfa_token_locked', 'mfa_token_expired', 'mfa_token_invalid']);

interface TotpStep {
  mfaToken: string;
  usedDefaultPassword: boolean;
}

function PasswordStep({ onMfa }: { onMfa: (step: TotpStep) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const result = await login(username, password);
    const usedDefaultPassword = password === DOCUMENTED_DEFAULT_PASSWORD;
    if ('mfa_token' in result) onMfa({ mfaToken: result.mfa_token, usedDefaultPassword });
    else await beginSession(result, { usedDefaultPassword });
  }, () => undefined);

  return (
    <form class="stack" onSubmit={submit} aria-label="Sign in">
      {error !== null && <Alert kind="error">{messageOf(error)}</Alert>}
      <TextField label="Username" autoComplete="username" required value={username} onValue={setUsername} autoCapitalize="none" spellcheck={false} />
      <TextField label="Password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
      <button type="submit" class="button-primary button-block" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      <p>
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
    </form>
  );
}

function CodeStep({ step, onRestart }: { step: TotpStep; onRestart: (why: string) => void }) {
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState(false);
  const { busy, error, setError, submit } = useSubmit(async () => {
    try {
      await beginSession(await secondFactor(step.mfaToken, code.trim()), { usedDefaultPassword: step.usedDefaultPassword });
    } catch (caught) {
      if (caught instanceof ApiError && LOG_IN_AGAIN.has(caught.code)) return onRestart(caught.message);
      throw caught;
    }
  }, () => undefined);

  return (
    <form class="stack" onSubmit={submit} aria-label="Second factor">
      <p>{recovery ? 'Enter one of your recovery codes. Each works once.' : 'Enter the 6-digit code from your authenticator app.'}</p>
      {error !== null && <Alert kind="error">{messageOf(error)}</Alert>}
      <TextField
        key={recovery ? 'recovery' : 'totp'}
        label={recovery ? 'Recovery code' : 'Authentication code'}
        autoComplete="one-time-code"
        inputMode={recovery ? 'text' : 'numeric'}
        pattern={recovery ? undefined : '[0-9]{6}'}
        required
        autoFocus
        value={code}
        onValue={setCode}
      />
      <button type="submit" class="button-primary button-block" disabled={busy}>
        {busy ? 'Checking…' : 'Continue'}
      </button>
      <button type="button" class="button-quiet" onClick={() => (setRecovery(!recovery), setCode(''), setError(null))}>
        {recovery ? 'Use an authenticator code instead' : 'Use a recovery code instead'}
      </button>
    </form>
  );
}

export default function SignInPage() {
  const state = useStore(session);
  const brand = useStore(branding);
  const [totp, setTotp] = useState<TotpStep | null>(null);
  const [restartReason, setRestartReason] = useState<string | null>(null);
  const ssoError = useStore(currentLocation).search.get('sso_error');
  const notice = restartReason ?? state.notice ?? (ssoError !== null ? ssoErrorMessage(ssoError) : undefined);
  return (
    <section class="stack">
      <h1 tabIndex={-1}>{totp ? 'Two-step verification' : 'Sign in'}</h1>
      {brand.login_message && <p class="login-message">{brand.login_message}</p>}
      {notice && !totp && <Alert kind={restartReason || notice.startsWith('Single sign-on') ? 'warning' : 'info'}>{notice}</Alert>}
      {totp ? (
        <CodeStep
          step={totp}
          onRestart={(why) => {
            setRestartReason(why);
            setTotp(null);
          }}
        />
      ) : (
        <>
          <PasswordStep onMfa={(step) => (setRestartReason(null), setTotp(step))} />
          <SsoButtons />
        </>
      )}
    </section>
  );
}
