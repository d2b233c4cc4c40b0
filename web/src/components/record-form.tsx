import { useState } from 'preact/hooks';
import { CheckboxField, FormActions, SelectField, TextArea, TextField } from './fields';
import { ErrorAlert, messageOf } from './error-alert';

/** One input of a declared form; the body sent is built from these, typed as the API expects. */
export interface FieldSpec {
  name: string;
  label: string;
  kind: 'text' | 'password' | 'number' | 'select' | 'checkbox' | 'lines';
  options?: readonly string[];
  required?: boolean;
  hint?: string;
  initial?: string | boolean;
  /** Send "" when left empty (the API gives "" a meaning, e.g. "pick the next free address"). */
  sendEmpty?: boolean;
}

type Values = Record<string, string | boolean>;

function initialValues(fields: readonly FieldSpec[]): Values {
  return Object.fromEntries(fields.map((field) => [field.name, field.initial ?? (field.kind === 'checkbox' ? false : field.kind === 'select' ? (field.options?.[0] ?? '') : '')]));
}

/** Empty inputs are left out, so the API applies its defaults (and names a missing required field itself). */
export function bodyOf(fields: readonly FieldSpec[], values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === 'checkbox') body[field.name] = value === true;
    else if (typeof value !== 'string') continue;
    else if (value.trim() === '') {
      if (field.sendEmpty) body[field.name] = '';
    }
    else if (field.kind === 'number') body[field.name] = Number(value);
    else if (field.kind === 'lines') body[field.name] = value.split(/[\n,]/).map((line) => line.trim()).filter(Boolean);
    else body[field.name] = field.kind === 'password' ? value : value.trim();
  }
  return body;
}

interface RecordFormProps {
  title: string;
  fields: readonly FieldSpec[];
  submitLabel: string;
  onSubmit(body: Record<string, unknown>): Promise<void>;
  onCancel?: () => void;
}

/** A form whose validation messages are the API's own (400 naming the field), shown in an alert. */
export function RecordForm({ title, fields, submitLabel, onSubmit, onCancel }: RecordFormProps) {
  const [values, setValues] = useState<Values>(() => initialValues(fields));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (name: string, value: string | boolean) => setValues((current) => ({ ...current, [name]: value }));

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit(bodyOf(fields, values));
      setValues(initialValues(fields));
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="record-form" onSubmit={submit} aria-label={title}>
      <h3>{title}</h3>
      <div class="form-grid">
        {fields.map((field) => {
          const value = values[field.name];
          if (field.kind === 'checkbox') return <CheckboxField key={field.name} name={field.name} label={field.label} checked={value === true} onChange={(checked) => set(field.name, checked)} />;
          if (field.kind === 'select') return <SelectField key={field.name} name={field.name} label={field.label} value={String(value)} options={field.options ?? []} onChange={(v) => set(field.name, v)} hint={field.hint} />;
          if (field.kind === 'lines') return <TextArea key={field.name} name={field.name} label={field.label} value={String(value)} onInput={(v) => set(field.name, v)} hint={field.hint ?? 'one per line'} />;
          return (
            <TextField
              key={field.name}
              name={field.name}
              label={field.label}
              type={field.kind === 'number' ? 'number' : field.kind === 'password' ? 'password' : 'text'}
              value={String(value)}
              onInput={(v) => set(field.name, v)}
              hint={field.hint}
              autoComplete={field.kind === 'password' ? 'new-password' : 'off'}
            />
          );
        })}
      </div>
      <ErrorAlert message={error} />
      <FormActions>
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </FormActions>
    </form>
  );
}
