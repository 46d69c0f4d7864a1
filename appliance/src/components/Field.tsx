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

/** A labelled input with its hint and error tied to it for assistive technology. */
export function TextField({ label, value, onValue, hint, error, type = 'text', ...input }: Props) {
  const id = useId();
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        // One input type at a time; Preact's types narrow the other attributes per type.
        type={type as 'text'}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
        aria-describedby={described}
        aria-invalid={error ? true : undefined}
        {...input}
      />
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
    </div>
  );
}
