import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { ErrorAlert, messageOf } from './error-alert';
import { TextField } from './fields';
import { useFocusInvalid } from './use-submit';

interface SearchFormProps {
  label: string;
  /** The query or path parameter the field fills: a 400 naming it is shown at the field. */
  name: string;
  button: string;
  required?: boolean;
  /** Runs the search with the typed value; its result is the caller's to keep. */
  search(value: string): Promise<void>;
  children?: ComponentChildren;
}

/**
 * A one-field search (role="search"). The API's 400 naming the field's parameter is shown under the field (marked
 * invalid, described by the message, focused), like a declared form's; any other failure in the alert below.
 */
export function SearchForm({ label, name, button, required, search, children }: SearchFormProps) {
  const [value, setValue] = useState('');
  const [refusal, setRefusal] = useState<{ message: string; atField: boolean } | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useFocusInvalid(form, refusal?.atField ? refusal.message : null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setRefusal(null);
    try {
      await search(value);
    } catch (failure) {
      setRefusal({ message: messageOf(failure), atField: failure instanceof ApiError && failure.parameter === name });
    }
  };
  return (
    <>
      <form ref={form} class="inline-form" onSubmit={submit} role="search" aria-label={button}>
        <TextField label={label} name={name} value={value} onInput={setValue} required={required} error={refusal?.atField ? refusal.message : null} />
        <button type="submit">{button}</button>
      </form>
      <ErrorAlert message={refusal && !refusal.atField ? refusal.message : null} />
      {children}
    </>
  );
}
