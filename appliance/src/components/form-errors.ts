import { ApiError, messageOf } from '../api/errors';

/** A form's failure, split: the message under the input it names (`body.x`), or one alert for the form. */
export interface FormErrors {
  field: (name: string) => string | undefined;
  general: string | null;
}

/** `fields` are the inputs the form shows; an error about any other field (or none) becomes the form's alert. */
export function formErrors(error: unknown, fields: readonly string[]): FormErrors {
  if (error === null || error === undefined) return { field: () => undefined, general: null };
  if (typeof error === 'string') return { field: () => undefined, general: error };
  const about = error instanceof ApiError ? error.field : undefined;
  const matches = (name: string) => !!about && (about === name || about.startsWith(`${name}.`));
  if (about && fields.some(matches)) return { field: (name) => (matches(name) ? messageOf(error) : undefined), general: null };
  return { field: () => undefined, general: messageOf(error) };
}
