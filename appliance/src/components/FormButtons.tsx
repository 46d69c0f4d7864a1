interface Props {
  busy: boolean;
  label: string;
  onCancel?: () => void;
}

/** A form's submit button (busy while the call runs) and, in a dialog, its cancel. */
export function FormButtons({ busy, label, onCancel }: Props) {
  return (
    <div class="row">
      <button type="submit" class="button-primary" disabled={busy}>
        {busy ? 'Saving…' : label}
      </button>
      {onCancel && (
        <button type="button" class="button-secondary" onClick={onCancel}>
          Cancel
        </button>
      )}
    </div>
  );
}
