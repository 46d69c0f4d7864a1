import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Role, User } from '../api/types';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { SelectField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useSubmit } from '../components/useSubmit';
import { ROLES, ROLES_HINT, type UserChange, updateUser } from './api';

export type UserAction = 'clear-totp' | 'revoke' | 'delete';

interface FieldProps {
  user: User;
  /** The input's path in the service's errors, e.g. body.role. */
  field: string;
  label: string;
  change: () => UserChange;
  onChanged: (user: User) => void;
  children: (error?: string) => ComponentChildren;
}

/** One field of the user, saved on its own so a refusal shows under that field. */
function UserField({ user, field, label, change, onChanged, children }: FieldProps) {
  const [saved, setSaved] = useState(false);
  const { busy, error, submit } = useSubmit(
    () => (setSaved(false), updateUser(user.id, change())),
    (next) => (setSaved(true), onChanged(next)),
  );
  const errors = formErrors(error, [field]);
  return (
    <form class="stack" onSubmit={submit}>
      {errors.general && <Alert kind="error">{errors.general}</Alert>}
      {children(errors.field(field))}
      <div class="actions">
        <FormButtons busy={busy} label={label} />
        <span role="status">{saved ? 'Saved.' : ''}</span>
      </div>
    </form>
  );
}

interface Props {
  user: User;
  isSelf: boolean;
  onChanged: (user: User) => void;
  onAction: (action: UserAction) => void;
  onClose: () => void;
}

/** Role, email and password of one user, and the actions that need a confirmation. */
export function ManageUser({ user, isSelf, onChanged, onAction, onClose }: Props) {
  const [role, setRole] = useState<Role>(user.role);
  const [email, setEmail] = useState(user.email ?? '');
  const [password, setPassword] = useState('');
  return (
    <Dialog title={`User ${user.username}`} onClose={onClose}>
      <div class="stack">
        {isSelf && <Alert kind="info">This is your own account. Lowering your role ends your access to this page.</Alert>}
        <UserField user={user} field="body.role" label="Change role" change={() => ({ role })} onChanged={onChanged}>
          {(error) => <SelectField label="Role" value={role} onValue={setRole} options={ROLES} hint={ROLES_HINT} error={error} />}
        </UserField>
        <UserField user={user} field="body.email" label="Save email" change={() => ({ email: email.trim() || null })} onChanged={onChanged}>
          {(error) => <TextField label="Email" type="email" autoComplete="off" value={email} onValue={setEmail} hint="Empty removes it." error={error} />}
        </UserField>
        {user.auth_source === 'local' && (
          <UserField user={user} field="body.password" label="Set password" change={() => ({ password })} onChanged={(next) => (setPassword(''), onChanged(next))}>
            {(error) => (
              <TextField
                label="New password"
                type="password"
                autoComplete="new-password"
                minLength={12}
                required
                value={password}
                onValue={setPassword}
                hint="At least 12 characters. Setting it signs the user out everywhere."
                error={error}
              />
            )}
          </UserField>
        )}
        <div class="actions">
          {user.totp_enabled && (
            <button type="button" class="button-secondary" onClick={() => onAction('clear-totp')}>
              Clear two-step sign-in
            </button>
          )}
          <button type="button" class="button-secondary" onClick={() => onAction('revoke')}>
            Sign out everywhere
          </button>
          <button type="button" class="button-danger" onClick={() => onAction('delete')}>
            Delete user
          </button>
        </div>
      </div>
    </Dialog>
  );
}
