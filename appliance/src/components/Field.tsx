import { useId } from 'preact/hooks';

/** The input attributes the forms use (Preact's full attribute types are a union per input type). */
interface InputProps {
  type?: 'text' | 'password' | 'email' | 'search' | 'url' | 'number';
  autoComplete?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  inputMode?: 'text' | 'numeric' | 'email' | 'search';
  autoFocus?: boolean;
  autoCapitalize?: 'none' | 'off' | 'on' | 'sentences' | 'words' | 'characters';
  spellcheck?: boolean;
  placeholder?: string;
  disabled?: boolean;
}

interface Props extends InputProps {
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string;
  error?: string;
}

/** The hint and error under a control, with the ids its aria-describedby names. */
function useDescription(hint?: string, error?: string) {
  const id = useId();
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  const notes = (
    <>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </>
  );
  return { id, control: { id, 'aria-describedby': described, 'aria-invalid': error ? true : undefined }, notes };
}

/** A labelled input with its hint and error tied to it for assistive technology. */
export function TextField({ label, value, onValue, hint, error, type = 'text', ...input }: Props) {
  const { id, control, notes } = useDescription(hint, error);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        // One input type at a time; Preact's types narrow the other attributes per type.
        type={type as 'text'}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
        {...control}
        {...input}
      />
      {notes}
    </div>
  );
}

interface TextAreaProps {
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string;
  error?: string;
  rows?: number;
  maxLength?: number;
  required?: boolean;
  spellcheck?: boolean;
  class?: string;
}

export function TextAreaField({ label, value, onValue, hint, error, class: className, ...textarea }: TextAreaProps) {
  const { id, control, notes } = useDescription(hint, error);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea value={value} onInput={(event) => onValue(event.currentTarget.value)} class={className} {...control} {...textarea} />
      {notes}
    </div>
  );
}

interface SelectProps<T extends string> {
  label: string;
  value: T;
  onValue: (value: T) => void;
  options: readonly (readonly [T, string])[];
  hint?: string;
  error?: string;
  disabled?: boolean;
}

export function SelectField<T extends string>({ label, value, onValue, options, hint, error, disabled }: SelectProps<T>) {
  const { id, control, notes } = useDescription(hint, error);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select value={value} disabled={disabled} onChange={(event) => onValue(event.currentTarget.value as T)} {...control}>
        {options.map(([optionValue, text]) => (
          <option key={optionValue} value={optionValue}>
            {text}
          </option>
        ))}
      </select>
      {notes}
    </div>
  );
}

interface CheckboxProps {
  label: string;
  checked: boolean;
  onChecked: (checked: boolean) => void;
  hint?: string;
  error?: string;
  disabled?: boolean;
}

/** A checkbox with its label beside it. */
export function CheckboxField({ label, checked, onChecked, hint, error, disabled }: CheckboxProps) {
  const { id, control, notes } = useDescription(hint, error);
  return (
    <div class="field">
      <div class="checkbox">
        <input type="checkbox" checked={checked} disabled={disabled} onChange={(event) => onChecked(event.currentTarget.checked)} {...control} />
        <label for={id}>{label}</label>
      </div>
      {notes}
    </div>
  );
}
