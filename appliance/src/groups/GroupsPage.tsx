import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { formatDate } from '../components/format';
import { useLoad } from '../components/useLoad';
import { deleteGroup, type Group, listGroups } from './api';
import { GroupNameForm } from './GroupNameForm';
import { MembersDialog } from './MembersDialog';
import './groups.css';

type Editing = { kind: 'new' } | { kind: 'rename' | 'members' | 'delete'; group: Group } | null;

const ORIGIN: Record<Group['origin'], string> = { builtin: 'Built in', local: 'Made here', oidc: 'Single sign-on' };

/** Groups and their members (admin, ENTERPRISE): a document is found only by the groups allowed to read it. */
export default function GroupsPage() {
  const list = useLoad(listGroups);
  const groups = list.value?.groups ?? null;
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const close = () => setEditing(null);

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Groups</h1>
        <button type="button" class="button-primary" onClick={() => (setNotice(null), setEditing({ kind: 'new' }))}>
          New group
        </button>
      </div>
      <p class="muted">
        A document is found, in search, chat and the library, only by members of the groups allowed to read it; editors set those groups on the documents, connectors and integrations
        pages. Every user is in everyone. A change holds from the next question, with nothing indexed again.
      </p>
      {notice && <Alert kind="success">{notice}</Alert>}
      {list.error && <Alert kind="error">{list.error}</Alert>}
      {groups === null && !list.error && <p class="loading">Loading…</p>}
      {groups && (
        <div class="table-wrap">
          <table class="table-cards groups">
            <caption class="visually-hidden">Groups</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Origin</th>
                <th scope="col">Members</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {groups.map((group) => (
                <tr key={group.id}>
                  <td data-label="Name">
                    <span class="strong">{group.name}</span>
                  </td>
                  <td data-label="Origin">{ORIGIN[group.origin]}</td>
                  <td data-label="Members">{group.builtin ? `Every user (${group.member_count})` : group.member_count}</td>
                  <td data-label="Created">{group.builtin ? '—' : formatDate(group.created_at)}</td>
                  <td data-label="Actions">
                    {group.builtin ? (
                      <span class="muted">Cannot be changed</span>
                    ) : (
                      <div class="actions">
                        <button type="button" class="button-secondary button-small" onClick={() => setEditing({ kind: 'members', group })} aria-label={`Members of ${group.name}`}>
                          Members
                        </button>
                        <button type="button" class="button-secondary button-small" onClick={() => setEditing({ kind: 'rename', group })} aria-label={`Rename ${group.name}`}>
                          Rename
                        </button>
                        <button type="button" class="button-danger button-small" onClick={() => setEditing({ kind: 'delete', group })} aria-label={`Delete ${group.name}`}>
                          Delete
                        </button>
                      </div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(editing?.kind === 'new' || editing?.kind === 'rename') && (
        <GroupNameForm
          group={editing.kind === 'rename' ? editing.group : undefined}
          onClose={close}
          onSaved={(saved) => {
            close();
            setNotice(editing.kind === 'new' ? `Group ${saved.name} was created. Add its members with Members.` : `The group is now called ${saved.name}.`);
            list.reload();
          }}
        />
      )}
      {editing?.kind === 'members' && <MembersDialog group={editing.group} onChanged={list.reload} onClose={close} />}
      {editing?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete this group?"
          confirmLabel="Delete group"
          onClose={close}
          onConfirm={async () => {
            await deleteGroup(editing.group.id);
            setNotice(`Group ${editing.group.name} was deleted.`);
            list.reload();
          }}
        >
          <p>
            <strong class="untrusted">{editing.group.name}</strong> will be deleted: its {editing.group.member_count} members leave it and documents it may read lose it. A document or
            source that only this group may read must be given another group first.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
