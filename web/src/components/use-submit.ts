import type { RefObject } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { messageOf } from './error-alert';

export interface Submission {
  busy: boolean;
  /** The refusal's message (the API's, or any failure's). */
  error: string | null;
  /** The body field a 400 names (`['port']`), so the form can show the message there; null otherwise. */
  errorPath: string[] | null;
  submit: (event: Event) => Promise<void>;
}

/** A form's submit: busy while `save` runs, and the API's refusal (or any failure) as the form's error. */
export function useSubmit(save: () => Promise<void>): Submission {
  const [refusal, setRefusal] = useState<{ error: string; errorPath: string[] | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      await save();
    } catch (failure) {
      setRefusal({ error: messageOf(failure), errorPath: failure instanceof ApiError ? failure.fieldPath : null });
    } finally {
      setBusy(false);
    }
  };
  return { busy, error: refusal?.error ?? null, errorPath: refusal?.errorPath ?? null, submit };
}

/** After a refusal, the keyboard is taken to the field it names (when the form marked one invalid). */
export function useFocusInvalid(form: RefObject<HTMLFormElement | null>, error: string | null): void {
  useEffect(() => {
    if (error) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [error]);
}
