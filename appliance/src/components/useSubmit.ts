import { useState } from 'preact/hooks';

/** A form's or a button's one call to the service: busy while it runs, the caught failure kept for formErrors(). */
export function useSubmit<T>(action: () => Promise<T>, onDone: (result: T) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event?: Event) => {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    let result: T;
    try {
      result = await action();
    } catch (caught) {
      setError(caught);
      setBusy(false);
      return;
    }
    setBusy(false);
    onDone(result);
  };
  return { busy, error, setError, submit };
}
