import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { SelectField } from '../components/Field';
import { FormButtons } from '../components/FormButtons';
import { useLoad } from '../components/useLoad';
import { useSubmit } from '../components/useSubmit';
import { addMember, type Group, listMembers, listUsers, type Member, removeMember } from './api';

interface Props {
  group: Group;
  /** A member joined or left: the page's counts change. */
  onChanged: () => void;
  onClose: () => void;
}

/** The members of one group: who is in it, add a user, remove one. A change holds from their next query. */
export function MembersDialog({ group, onChanged, onClose }: Props) {
  const members = useLoad(() => listMembers(group.id));
  const users = useLoad(listUsers);
  const [userId, setUserId] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const inGroup = new Set(members.value?.members.map((member) => member.id));
  const candidates = users.value?.users.filter((user) => !inGroup.has(user.id)) ?? [];
  const chosen = candidates.some((user) => user.id === userId) ? userId : (candidates[0]?.id ?? '');

  const changed = (text: string) => {
    setNotice(text);
    members.reload();
    onChanged();
  };
  const add = useSubmit(
    () => (setNotice(null), setFailure(null), addMember(group.id, chosen)),
    () => changed(`${candidates.find((user) => user.id === chosen)?.username ?? 'The user'} was added.`),
  );
  const remove = async (member: Member) => {
    setFailure(null);
    setNotice(null);
    try {
      await removeMember(group.id, member.id);
      changed(`${member.username} was removed.`);
    } catch (caught) {
      setFailure(messageOf(caught));
    }
  };
  const error = failure ?? members.error ?? users.error ?? (add.error ? messageOf(add.error) : null);

  return (
    <Dialog title={`Members of ${group.name}`} onClose={onClose} wide>
      <div class="stack">
        {notice && <Alert kind="success">{notice}</Alert>}
        {error && <Alert kind="error">{error}</Alert>}
        {!members.value && !members.error && <p class="loading">Loading…</p>}
        {members.value?.members.length === 0 && <p class="muted">No members yet.</p>}
        {members.value && members.value.members.length > 0 && (
          <ul class="member-list" aria-label={`Members of ${group.name}`}>
            {members.value.members.map((member) => (
              <li key={member.id}>
                <span class="strong">{member.username}</span>
                <span class="muted">
                  {member.role}
                  {member.auth_source === 'oidc' ? ', single sign-on' : ''}
                </span>
                <button type="button" class="button-secondary button-small" onClick={() => void remove(member)} aria-label={`Remove ${member.username}`}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
        {users.value && (
          <form class="stack" onSubmit={add.submit} aria-label="Add a member">
            {candidates.length ? (
              <>
                <SelectField label="User to add" value={chosen} onValue={setUserId} options={candidates.map((user) => [user.id, `${user.username} (${user.role})`] as const)} />
                <FormButtons busy={add.busy} label="Add to group" />
              </>
            ) : (
              <p class="muted">Every user is already a member.</p>
            )}
          </form>
        )}
      </div>
    </Dialog>
  );
}
