import { useState } from 'preact/hooks';
import type { Role, User } from '../api/types';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { SelectField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useSubmit } from '../components/useSubmit';
import { createUser, ROLES, ROLES_HINT } from './api';

const FIELDS = ['body.username', 'body.password', 'body.role', 'body.email'];

export function NewUserForm({ onSaved, onClose }: { onSaved: (user: User) => void; onClose: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [email, setEmail] = useState('');
  const { busy, error, submit } = useSubmit(() => createUser({ username: username.trim(), password, role, ...(email.trim() ? { email: email.trim() } : {}) }), onSaved);
  const errors = formErrors(error, FIELDS);
  return (
    <Dialog title="New user" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        {errors.general && <Alert kind="error">{errors.general}</Alert>}
        <TextField
          label="Username"
          required
          minLength={3}
          maxLength={64}
          autoComplete="off"
          autoCapitalize="none"
          spellcheck={false}
          value={username}
          onValue={setUsername}
          hint="3 to 64 of A–Z, a–z, 0–9, dot, underscore, @ and hyphen."
          error={errors.field('body.username')}
        />
        <TextField
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          value={password}
          onValue={setPassword}
          hint="At least 12 characters; not the username. Tell it to the user through a safe channel."
          error={errors.field('body.password')}
        />
        <SelectField label="Role" value={role} onValue={setRole} options={ROLES} hint={ROLES_HINT} error={errors.field('body.role')} />
        <TextField label="Email (optional)" type="email" autoComplete="off" value={email} onValue={setEmail} hint="For password reset links." error={errors.field('body.email')} />
        <FormButtons busy={busy} label="Create user" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
