import type { ComponentChildren } from 'preact';

/** Inputs are wrapped in their <label>, so each one is named for screen readers and tests. */

interface BaseProps {
  label: string;
  name: string;
  hint?: string;
}

export function TextField({ label, name, value, onInput, type = 'text', required, placeholder, hint, autoComplete, inputMode, pattern }: BaseProps & {
  value: string;
  onInput(value: string): void;
  type?: 'text' | 'password' | 'number' | 'email' | 'url';
  required?: boolean;
  placeholder?: string;
  autoComplete?: string;
  inputMode?: 'numeric' | 'text';
  pattern?: string;
}) {
  // Preact's typings tie `role` to each literal input type; a type chosen at run time needs this widening.
  const inputType = type as 'text';
  return (
    <label class="field">
      <span>{label}</span>
      <input
        name={name}
        type={inputType}
        value={value}
        required={required}
        placeholder={placeholder}
        autoComplete={autoComplete}
        inputMode={inputMode}
        pattern={pattern}
        onInput={(event) => onInput((event.currentTarget as HTMLInputElement).value)}
      />
      {hint && <small>{hint}</small>}
    </label>
  );
}

export function TextArea({ label, name, value, onInput, hint, rows = 3 }: BaseProps & { value: string; onInput(value: string): void; rows?: number }) {
  return (
    <label class="field">
      <span>{label}</span>
      <textarea name={name} rows={rows} value={value} onInput={(event) => onInput((event.currentTarget as HTMLTextAreaElement).value)} />
      {hint && <small>{hint}</small>}
    </label>
  );
}

export function SelectField({ label, name, value, options, onChange, hint }: BaseProps & {
  value: string;
  options: readonly (string | { value: string; label: string })[];
  onChange(value: string): void;
}) {
  return (
    <label class="field">
      <span>{label}</span>
      <select name={name} value={value} onChange={(event) => onChange((event.currentTarget as HTMLSelectElement).value)}>
        {options.map((option) => {
          const { value: optionValue, label: optionLabel } = typeof option === 'string' ? { value: option, label: option } : option;
          return (
            <option key={optionValue} value={optionValue}>
              {optionLabel}
            </option>
          );
        })}
      </select>
      {hint && <small>{hint}</small>}
    </label>
  );
}

export function CheckboxField({ label, name, checked, onChange }: BaseProps & { checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label class="field checkbox">
      <input name={name} type="checkbox" checked={checked} onChange={(event) => onChange((event.currentTarget as HTMLInputElement).checked)} />
      <span>{label}</span>
    </label>
  );
}

export function FormActions({ children }: { children: ComponentChildren }) {
  return <div class="form-actions">{children}</div>;
}
