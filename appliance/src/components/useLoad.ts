import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api/errors';

export interface Loaded<T> {
  /** The last value loaded (kept while a reload runs, so the page does not flash). */
  value: T | null;
  error: string | null;
  /** Loads again, e.g. after a change or when a job finished. */
  reload: () => void;
  /** Takes a value the page already has (a save's answer) without asking again. */
  set: (value: T) => void;
}

/** A page's GET: loaded when `deps` change or on reload(); an answer that arrives after newer deps is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let stale = false;
    load().then(
      (loaded) => {
        if (stale) return;
        setValue(() => loaded);
        setError(null);
      },
      (caught) => !stale && setError(messageOf(caught)),
    );
    return () => void (stale = true);
  }, [...deps, round]);
  return { value, error, reload: () => setRound((n) => n + 1), set: (next) => setValue(() => next) };
}
