import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useSubmit } from '../components/useSubmit';
import { createGroup, type Group, renameGroup } from './api';

interface Props {
  /** The group to rename; none: a new group. */
  group?: Group;
  onSaved: (group: Group) => void;
  onClose: () => void;
}

/** A new group's name, or a new name for one (members and document access follow a rename). */
export function GroupNameForm({ group, onSaved, onClose }: Props) {
  const [name, setName] = useState(group?.name ?? '');
  const { busy, error, submit } = useSubmit(() => (group ? renameGroup(group.id, name.trim()) : createGroup(name.trim())), onSaved);
  const errors = formErrors(error, ['body.name']);
  return (
    <Dialog title={group ? `Rename ${group.name}` : 'New group'} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        {errors.general && <Alert kind="error">{errors.general}</Alert>}
        <TextField
          label="Group name"
          required
          maxLength={64}
          autoComplete="off"
          spellcheck={false}
          value={name}
          onValue={setName}
          hint={group ? 'Its members and the documents it may read keep it under the new name.' : 'Up to 64 characters; unique whatever the case.'}
          error={errors.field('body.name')}
        />
        <FormButtons busy={busy} label={group ? 'Rename group' : 'Create group'} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
