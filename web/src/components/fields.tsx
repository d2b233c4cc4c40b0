import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/**
 * Every input has its own <label for>, so it is named by the label alone; a hint is tied to it with
 * aria-describedby rather than put inside the label, where it would become part of the name.
 */

interface BaseProps {
  label: string;
  name: string;
  hint?: string;
}

function Hint({ id, hint }: { id: string; hint?: string }) {
  return hint ? <small id={id}>{hint}</small> : null;
}

/** An API error naming this field, shown under it; the input is marked invalid and described by it. */
function FieldError({ id, error }: { id: string; error?: string | null }) {
  return error ? (
    <small id={id} class="field-error" role="alert">
      {error}
    </small>
  ) : null;
}

const describedBy = (id: string, hint?: string, error?: string | null) => [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;

export function TextField({ label, name, value, onInput, type = 'text', required, placeholder, hint, autoComplete, inputMode, pattern, error }: BaseProps & {
  value: string;
  onInput(value: string): void;
  type?: 'text' | 'password' | 'number' | 'email' | 'url';
  required?: boolean;
  placeholder?: string;
  autoComplete?: string;
  inputMode?: 'numeric' | 'text';
  pattern?: string;
  error?: string | null;
}) {
  const id = useId();
  // Preact's typings tie `role` to each literal input type; a type chosen at run time needs this widening.
  const inputType = type as 'text';
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={inputType}
        value={value}
        required={required}
        placeholder={placeholder}
        autoComplete={autoComplete}
        inputMode={inputMode}
        pattern={pattern}
        aria-describedby={describedBy(id, hint, error)}
        aria-invalid={error ? true : undefined}
        onInput={(event) => onInput((event.currentTarget as HTMLInputElement).value)}
      />
      <Hint id={`${id}-hint`} hint={hint} />
      <FieldError id={`${id}-error`} error={error} />
    </div>
  );
}

export function TextArea({ label, name, value, onInput, hint, rows = 3, error }: BaseProps & { value: string; onInput(value: string): void; rows?: number; error?: string | null }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        name={name}
        rows={rows}
        value={value}
        aria-describedby={describedBy(id, hint, error)}
        aria-invalid={error ? true : undefined}
        onInput={(event) => onInput((event.currentTarget as HTMLTextAreaElement).value)}
      />
      <Hint id={`${id}-hint`} hint={hint} />
      <FieldError id={`${id}-error`} error={error} />
    </div>
  );
}

export function SelectField({ label, name, value, options, onChange, hint, error }: BaseProps & {
  value: string;
  options: readonly (string | { value: string; label: string })[];
  onChange(value: string): void;
  error?: string | null;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        aria-describedby={describedBy(id, hint, error)}
        aria-invalid={error ? true : undefined}
        onChange={(event) => onChange((event.currentTarget as HTMLSelectElement).value)}
      >
        {options.map((option) => {
          const { value: optionValue, label: optionLabel } = typeof option === 'string' ? { value: option, label: option } : option;
          return (
            <option key={optionValue} value={optionValue}>
              {optionLabel}
            </option>
          );
        })}
      </select>
      <Hint id={`${id}-hint`} hint={hint} />
      <FieldError id={`${id}-error`} error={error} />
    </div>
  );
}

export function CheckboxField({ label, name, checked, onChange, error }: BaseProps & { checked: boolean; onChange(checked: boolean): void; error?: string | null }) {
  const id = useId();
  const box = (
    <label class="field checkbox">
      <input
        name={name}
        type="checkbox"
        checked={checked}
        aria-describedby={describedBy(id, undefined, error)}
        aria-invalid={error ? true : undefined}
        onChange={(event) => onChange((event.currentTarget as HTMLInputElement).checked)}
      />
      <span>{label}</span>
    </label>
  );
  if (!error) return box;
  return (
    <div class="field">
      {box}
      <FieldError id={`${id}-error`} error={error} />
    </div>
  );
}

export function FormActions({ children }: { children: ComponentChildren }) {
  return <div class="form-actions">{children}</div>;
}
