import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { ApiError } from '../api/errors';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useLoad } from '../components/useLoad';
import { useSubmit } from '../components/useSubmit';
import { type Access, listGroups, myGroups } from './api';

interface Props {
  title: string;
  /** The groups allowed now (a source's are asked of the service, a document's come with the list). */
  current: () => Promise<string[]>;
  save: (groups: string[]) => Promise<Access>;
  onSaved: (access: Access, stillReadable: boolean) => void;
  onClose: () => void;
  /** What the change reaches, e.g. a source's documents; and whose access the reader would lose. */
  children?: ComponentChildren;
  /** "this document", "this connector's documents": what the reader would stop seeing. */
  subject: string;
}

const key = (name: string) => name.toLowerCase();

/** The groups allowed to read a document or a source's documents, as checkboxes; at least one. */
export function AccessDialog({ title, current, save, onSaved, onClose, children, subject }: Props) {
  const id = useId();
  const loaded = useLoad(() => Promise.all([listGroups(), myGroups(), current()]));
  const [picked, setPicked] = useState<Set<string> | null>(null);
  const [groups, mine, allowed] = loaded.value ?? [null, [], []];
  const chosen = picked ?? new Set(allowed.map(key));
  // A stored name the list lacks stays offered, so saving never drops it unseen (the service refuses it if it is gone).
  const names = groups ? [...groups.groups.map((group) => group.name), ...allowed.filter((name) => !groups.groups.some((group) => key(group.name) === key(name)))] : [];
  const selection = () => names.filter((name) => chosen.has(key(name)));
  const stillReadable = mine.some((name) => chosen.has(key(name)));
  const { busy, error, setError, submit } = useSubmit(
    async () => {
      // Refused here as the service would, under the same field.
      if (!chosen.size) throw new ApiError(400, 'required', 'Choose at least one group.', 'body.groups');
      return save(selection());
    },
    (access) => onSaved(access, stillReadable),
  );
  const errors = formErrors(error, ['body.groups']);
  const fieldError = errors.field('body.groups');
  const toggle = (name: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(key(name));
    else next.delete(key(name));
    setPicked(next);
    setError(null);
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <form class="stack" onSubmit={submit} noValidate>
        {children}
        {loaded.error && <Alert kind="error">{loaded.error}</Alert>}
        {!loaded.value && !loaded.error && <p class="loading">Loading…</p>}
        {errors.general && <Alert kind="error">{errors.general}</Alert>}
        {loaded.value && (
          <fieldset class="stack" aria-describedby={`${id}-hint${fieldError ? ` ${id}-error` : ''}`} aria-invalid={fieldError ? true : undefined}>
            <legend>Allowed groups</legend>
            <p class="hint" id={`${id}-hint`}>
              Members of any group ticked here can find and open it; everyone means every user.
            </p>
            {names.map((name, index) => (
              <div class="checkbox" key={name}>
                <input type="checkbox" id={`${id}-${index}`} checked={chosen.has(key(name))} onChange={(event) => toggle(name, event.currentTarget.checked)} />
                <label for={`${id}-${index}`} class="untrusted">
                  {name}
                </label>
              </div>
            ))}
            {fieldError && (
              <p class="field-error" id={`${id}-error`}>
                {fieldError}
              </p>
            )}
          </fieldset>
        )}
        {loaded.value && chosen.size > 0 && !stillReadable && (
          <Alert kind="warning">You are in none of these groups: once saved, you will no longer see {subject} until you join one of them.</Alert>
        )}
        <FormButtons busy={busy} label="Save access" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
