import { useState } from 'preact/hooks';
import { messageOf } from './error-alert';

/** A form's submit: busy while `save` runs, and the API's refusal (or any failure) as the form's error. */
export function useSubmit(save: () => Promise<void>): { busy: boolean; error: string | null; submit: (event: Event) => Promise<void> } {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await save();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}
