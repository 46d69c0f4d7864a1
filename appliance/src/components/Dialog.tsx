import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

interface Props {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}

/** A modal on the native <dialog>: focus is kept inside, Escape closes, and focus returns where it was. */
export function Dialog({ title, onClose, children, wide }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    dialog.current?.showModal();
    return () => opener?.focus?.();
  }, []);
  return (
    <dialog ref={dialog} class={wide ? 'dialog dialog-wide' : 'dialog'} aria-label={title} onClose={onClose} onCancel={onClose}>
      <header class="dialog-header">
        <h2>{title}</h2>
        <button type="button" class="button-quiet" onClick={onClose}>
          Close
        </button>
      </header>
      <div class="dialog-body">{children}</div>
    </dialog>
  );
}
