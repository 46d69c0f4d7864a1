import { useState } from 'preact/hooks';
import { ApiError, messageOf } from '../api/errors';
import type { Tier, User } from '../api/types';
import { Alert } from '../components/Alert';
import { TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { LockedBadge } from '../components/LockedBadge';
import { useSubmit } from '../components/useSubmit';
import { tierAtLeast, userChanged } from '../session/session';
import { confirmEnrolment, disableTotp, type Enrolment, me, startEnrolment, svgImageUrl } from './api';
import { RecoveryCodes } from './RecoveryCodes';

const CODE_FIELD = ['body.totp_code'];

/** A 6-digit code input, the same for confirming and disabling. */
function CodeForm({ label, action, busyLabel, onSubmit }: { label: string; action: string; busyLabel: string; onSubmit: (code: string) => Promise<unknown> }) {
  const [code, setCode] = useState('');
  const { busy, error, submit } = useSubmit(() => onSubmit(code.trim()), () => setCode(''));
  const errors = formErrors(error, CODE_FIELD);
  // A wrong code is a 400 without a field; it belongs under the input all the same.
  const codeError = errors.field('body.totp_code') ?? (error instanceof ApiError && error.status === 400 ? errors.general : undefined);
  return (
    <form class="stack narrow" onSubmit={submit}>
      {errors.general && !codeError && <Alert kind="error">{errors.general}</Alert>}
      <TextField label={label} autoComplete="one-time-code" inputMode="numeric" pattern="[0-9]{6}" maxLength={6} required value={code} onValue={setCode} error={codeError ?? undefined} />
      <div>
        <button type="submit" class="button-primary" disabled={busy}>
          {busy ? busyLabel : action}
        </button>
      </div>
    </form>
  );
}

type Step = { kind: 'idle' } | { kind: 'scan'; enrolment: Enrolment } | { kind: 'codes'; codes: string[] };

/** Two-step sign-in: enrol (ENTERPRISE) with the QR code, confirm, keep the recovery codes; disable with a code (any plan). */
export function TotpSection({ user, tier }: { user: User; tier: Tier }) {
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const canEnrol = tierAtLeast(tier, 'ENTERPRISE');

  const begin = async () => {
    setError(null);
    setNotice(null);
    try {
      setStep({ kind: 'scan', enrolment: await startEnrolment() });
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  if (user.auth_source === 'oidc') return <p class="muted">You sign in through single sign-on: your identity provider's own second factor applies.</p>;

  if (step.kind === 'codes') {
    return (
      <RecoveryCodes
        codes={step.codes}
        onDone={async () => {
          setStep({ kind: 'idle' });
          setNotice('Two-step sign-in is on. You will be asked for a code at each sign-in.');
          userChanged(await me());
        }}
      />
    );
  }

  if (user.totp_enabled) {
    return (
      <div class="stack">
        {notice && <Alert kind="success">{notice}</Alert>}
        <p>
          <span class="badge badge-ok">On</span> Each sign-in asks for a code from your authenticator app.
        </p>
        <h3>Turn it off</h3>
        <CodeForm
          label="Code from your authenticator"
          action="Turn off two-step sign-in"
          busyLabel="Turning off…"
          onSubmit={async (code) => {
            userChanged(await disableTotp(code));
            setNotice('Two-step sign-in is off.');
          }}
        />
      </div>
    );
  }

  if (step.kind === 'scan') {
    return (
      <div class="stack">
        <ol class="steps">
          <li>Scan this code with an authenticator app (or type the key below into it).</li>
          <li>Enter the 6-digit code the app shows.</li>
        </ol>
        <img class="qr-code" src={svgImageUrl(step.enrolment.qr_code)} alt="QR code for your authenticator app" width={200} height={200} />
        <p>
          Key for manual entry: <code class="secret">{step.enrolment.secret}</code>
        </p>
        <CodeForm label="Code from your authenticator" action="Confirm" busyLabel="Checking…" onSubmit={async (code) => setStep({ kind: 'codes', codes: (await confirmEnrolment(code)).recovery_codes })} />
        <div>
          <button type="button" class="button-quiet" onClick={() => setStep({ kind: 'idle' })}>
            Cancel
          </button>
        </div>
      </div>
    );
  }

  return (
    <div class="stack">
      {notice && <Alert kind="success">{notice}</Alert>}
      {error && <Alert kind="error">{error}</Alert>}
      <p>
        <span class="badge">Off</span> Add a code from an authenticator app to your password at each sign-in.
      </p>
      {canEnrol ? (
        <div>
          <button type="button" class="button-primary" onClick={() => void begin()}>
            Set up two-step sign-in
          </button>
        </div>
      ) : (
        <p class="locked">
          Setting it up needs the ENTERPRISE plan. <LockedBadge tier="ENTERPRISE" />
        </p>
      )}
    </div>
  );
}
