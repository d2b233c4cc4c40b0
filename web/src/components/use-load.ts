import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './error-alert';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Loads once per change of `key`, keeps the last good data while reloading, and reports errors as text. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const latest = useRef(load);
  latest.current = load;

  useEffect(() => {
    let current = true;
    setLoading(true);
    latest
      .current()
      .then((value) => {
        if (!current) return;
        setData(value);
        setError(null);
      })
      .catch((failure: unknown) => current && setError(messageOf(failure)))
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [key, generation]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { data, error, loading, reload };
}
