import type { ComponentChildren } from 'preact';
import { messageOf } from '../api/errors';
import { Alert } from './Alert';
import { Dialog } from './Dialog';
import { useSubmit } from './useSubmit';

interface Props {
  title: string;
  /** What will happen, in words (names in it are text nodes). */
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  /** A destructive action gets the danger button. */
  danger?: boolean;
}

/** Asks before an action; a refusal is shown in the dialog, which stays open so the reader sees why. */
export function ConfirmDialog({ title, children, confirmLabel, onConfirm, onClose, danger = true }: Props) {
  const { busy, error, submit } = useSubmit(onConfirm, onClose);
  return (
    <Dialog title={title} onClose={onClose}>
      <div class="stack">
        <div>{children}</div>
        {error !== null && <Alert kind="error">{messageOf(error)}</Alert>}
        <div class="row">
          <button type="button" class={danger ? 'button-danger' : 'button-primary'} disabled={busy} onClick={() => void submit()}>
            {confirmLabel}
          </button>
          <button type="button" class="button-secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </div>
    </Dialog>
  );
}
