import { useState } from 'preact/hooks';
import type { User } from '../api/types';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { formatDate } from '../components/format';
import { Pagination } from '../components/Pagination';
import { useLoad } from '../components/useLoad';
import { session, sessionEnded, userChanged } from '../session/session';
import { useStore } from '../store';
import { clearTotp, deleteUser, listUsers, revokeSessions } from './api';
import { ManageUser, type UserAction } from './ManageUser';
import { NewUserForm } from './NewUserForm';

const PAGE_SIZE = 25;

type Editing = { kind: 'new' } | { kind: 'manage'; user: User } | { kind: UserAction; user: User } | null;

const CONFIRM: Record<UserAction, { title: string; label: string; text: string }> = {
  'clear-totp': { title: 'Clear two-step sign-in?', label: 'Clear it', text: 'will sign in with the password alone until they set up a new authenticator. Do this only for someone who lost both the authenticator and the recovery codes.' },
  revoke: { title: 'Sign this user out everywhere?', label: 'Sign out everywhere', text: 'will be signed out of every browser and app at their next request.' },
  delete: { title: 'Delete this user?', label: 'Delete user', text: 'will be deleted and signed out. This cannot be undone.' },
};

/** Accounts (admin): list, create, role, email, password, second factor, sessions, delete. */
export default function UsersPage() {
  const me = useStore(session).user!;
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => listUsers(PAGE_SIZE, offset), [offset]);
  const page = list.value;
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const refresh = list.reload;

  const changed = (user: User) => {
    if (user.id === me.id) userChanged(user);
    if (page) list.set({ ...page, users: page.users.map((other) => (other.id === user.id ? user : other)) });
  };

  const act = async (action: UserAction, user: User) => {
    if (action === 'delete') await deleteUser(user.id);
    if (action === 'clear-totp') await clearTotp(user.id);
    if (action === 'revoke') {
      await revokeSessions(user.username);
      if (user.id === me.id) return sessionEnded('Your sessions were ended. Sign in again.');
    }
    setNotice(action === 'delete' ? `User ${user.username} was deleted.` : action === 'revoke' ? `${user.username} was signed out everywhere.` : `Two-step sign-in was cleared for ${user.username}.`);
    refresh();
  };

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Users</h1>
        <button type="button" class="button-primary" onClick={() => setEditing({ kind: 'new' })}>
          New user
        </button>
      </div>
      {notice && <Alert kind="success">{notice}</Alert>}
      {list.error && <Alert kind="error">{list.error}</Alert>}
      {page === null && !list.error && <p class="loading">Loading…</p>}
      {page && page.users.length > 0 && (
        <div class="table-wrap">
          <table class="table-cards">
            <caption class="visually-hidden">Users</caption>
            <thead>
              <tr>
                <th scope="col">Username</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Signs in with</th>
                <th scope="col">Two-step</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.users.map((user) => (
                <tr key={user.id}>
                  <td data-label="Username">
                    <span class="strong">
                      {user.username}
                      {user.id === me.id && <span class="muted"> (you)</span>}
                    </span>
                  </td>
                  <td data-label="Email">{user.email ?? '—'}</td>
                  <td data-label="Role">{user.role}</td>
                  <td data-label="Signs in with">{user.auth_source === 'oidc' ? 'Single sign-on' : 'Password'}</td>
                  <td data-label="Two-step">{user.totp_enabled ? 'On' : 'Off'}</td>
                  <td data-label="Created">{formatDate(user.created_at ?? null)}</td>
                  <td data-label="Actions">
                    <button type="button" class="button-secondary button-small" onClick={() => setEditing({ kind: 'manage', user })} aria-label={`Manage ${user.username}`}>
                      Manage
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page && <Pagination offset={offset} pageSize={PAGE_SIZE} total={page.total} onOffset={setOffset} />}
      {editing?.kind === 'new' && (
        <NewUserForm
          onClose={() => setEditing(null)}
          onSaved={(user) => {
            setEditing(null);
            setNotice(`User ${user.username} was created.`);
            refresh();
          }}
        />
      )}
      {editing?.kind === 'manage' && (
        <ManageUser
          user={editing.user}
          isSelf={editing.user.id === me.id}
          onChanged={changed}
          onAction={(action) => setEditing({ kind: action, user: editing.user })}
          onClose={() => setEditing(null)}
        />
      )}
      {editing && editing.kind !== 'new' && editing.kind !== 'manage' && (
        <ConfirmDialog title={CONFIRM[editing.kind].title} confirmLabel={CONFIRM[editing.kind].label} onClose={() => setEditing(null)} onConfirm={() => act(editing.kind as UserAction, editing.user)}>
          <p>
            <strong class="untrusted">{editing.user.username}</strong> {CONFIRM[editing.kind].text}
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
