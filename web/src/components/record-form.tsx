import { useEffect, useRef, useState } from 'preact/hooks';
import type { Row } from '../api/types';
import { CheckboxField, FormActions, SelectField, TextArea, TextField } from './fields';
import { ErrorAlert } from './error-alert';
import { useFocusInvalid, useSubmit } from './use-submit';

/** One input of a declared form; the body sent is built from these, typed as the API expects. */
export interface FieldSpec {
  name: string;
  label: string;
  /**
   * `lines`: a list, one entry per line; `paragraph`: free text whose line breaks are kept; `json`: an object the
   * API takes as JSON (not a JSON string), typed as JSON text.
   */
  kind: 'text' | 'password' | 'number' | 'select' | 'checkbox' | 'lines' | 'paragraph' | 'json';
  options?: readonly string[];
  required?: boolean;
  hint?: string;
  initial?: string | boolean;
  /** Send "" when left (or made) empty (the API gives "" a meaning); otherwise create leaves it out, edit sends null. */
  sendEmpty?: boolean;
  /** How a record read from the API shows in this input, when it is not the record's own field of that name. */
  read?: (record: Row) => string | boolean;
  /** A write-only secret (kind password): the record field saying whether one is set. Never prefilled. */
  setFlag?: string;
}

type Values = Record<string, string | boolean>;

function blankValue(field: FieldSpec): string | boolean {
  return field.initial ?? (field.kind === 'checkbox' ? false : field.kind === 'select' ? (field.options?.[0] ?? '') : '');
}

/** A record's value as its input shows it: lists one per line, null as empty; secrets are never shown. */
function recordValue(field: FieldSpec, record: Row): string | boolean {
  if (field.kind === 'password') return '';
  if (field.read) return field.read(record);
  const value = record[field.name];
  if (field.kind === 'checkbox') return value === true;
  if (field.kind === 'json') return value === null || value === undefined ? '' : JSON.stringify(value, null, 2);
  if (Array.isArray(value)) return value.map(String).join(field.kind === 'lines' ? '\n' : ', ');
  return value === null || value === undefined ? '' : String(value);
}

function initialValues(fields: readonly FieldSpec[], record?: Row | null): Values {
  return Object.fromEntries(fields.map((field) => [field.name, record ? recordValue(field, record) : blankValue(field)]));
}

/** JSON text as the value it writes; text that is not JSON is sent as typed, so the API's 400 names the field. */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A typed value for the API; a number that is not one stays text, so the API's 400 names the field. */
function typed(field: FieldSpec, value: string | boolean): unknown {
  if (field.kind === 'checkbox') return value === true;
  const text = String(value);
  if (field.kind === 'password' || field.kind === 'paragraph') return text;
  if (field.kind === 'lines') return text.split(/[\n,]/).map((line) => line.trim()).filter(Boolean);
  if (field.kind === 'json') return parsedJson(text);
  if (field.kind === 'number') return /^-?\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text.trim();
  return text.trim();
}

/**
 * The request body. Creating: empty inputs are left out, so the API applies its defaults (and names a missing
 * required field itself). Editing: only what changed from the record is sent (PUT keeps the other fields), an
 * emptied input as null (clears it; an emptied list as []), and a secret only when a new one was typed.
 */
export function bodyOf(fields: readonly FieldSpec[], values: Values, original?: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (original && value === original[field.name]) continue;
    const empty = typeof value === 'string' && value.trim() === '';
    if (!empty) body[field.name] = typed(field, value);
    else if (field.sendEmpty) body[field.name] = '';
    else if (original && field.kind === 'lines') body[field.name] = [];
    else if (original && field.kind !== 'password') body[field.name] = null;
  }
  return body;
}

/** The hint of a write-only secret: whether one is set, and that typing replaces it. */
function secretHint(field: FieldSpec, record: Row): string {
  const set = field.setFlag ? record[field.setFlag] === true : null;
  if (set === false) return 'Not set. Type one to set it.';
  return `${set ? 'Currently set. ' : ''}Leave empty to keep the current one; type a new one to replace it.`;
}

/** A select offers the record's current value even when it is not among the declared options. */
const optionsWith = (options: readonly string[], value: string) => (value === '' || options.includes(value) ? options : [value, ...options]);

interface RecordFormProps {
  title: string;
  fields: readonly FieldSpec[];
  submitLabel: string;
  /** The form's name is still `title`, but no heading shows it (the section around it has one). */
  hideTitle?: boolean;
  /** Editing: the record as read (prefills the inputs; the form resets when a new read arrives). */
  record?: Row | null;
  onSubmit(body: Record<string, unknown>): Promise<void>;
  onCancel?: () => void;
  /** A create form that keeps what was typed after a submit (a preview to adjust and run again). */
  keepValues?: boolean;
  /**
   * Which input a 400 is about, from the body path its message names (`['port']`); default its first part. A form
   * whose body is not its fields (a rule in a list) says where its own fields are.
   */
  errorField?: (path: readonly string[]) => string | undefined;
}

const firstPart = (path: readonly string[]) => path[0];

/**
 * A form whose validation messages are the API's own: a 400 naming one of its fields is shown at that field (marked
 * invalid, described by the message, focused); any other refusal in the form's alert.
 */
export function RecordForm({ title, fields, submitLabel, hideTitle, record, onSubmit, onCancel, keepValues, errorField = firstPart }: RecordFormProps) {
  const [values, setValues] = useState<Values>(() => initialValues(fields, record));
  const set = (name: string, value: string | boolean) => setValues((current) => ({ ...current, [name]: value }));
  // a new read of the record (after a save refused as stale) shows what is stored now; only a new one: a reset
  // on mount would race the first keystrokes
  const shownRecord = useRef(record);
  useEffect(() => {
    if (shownRecord.current === record) return;
    shownRecord.current = record;
    setValues(initialValues(fields, record));
  }, [record]);

  const { busy, error, errorPath, submit } = useSubmit(async () => {
    await onSubmit(bodyOf(fields, values, record ? initialValues(fields, record) : undefined));
    if (!record && !keepValues) setValues(initialValues(fields));
  });
  const named = errorPath ? errorField(errorPath) : undefined;
  const at = fields.some((field) => field.name === named) ? named : undefined;
  const errorAt = (name: string) => (name === at ? error : null);
  const form = useRef<HTMLFormElement>(null);
  useFocusInvalid(form, error);

  return (
    <form class="record-form" onSubmit={submit} aria-label={title} ref={form}>
      {!hideTitle && <h3>{title}</h3>}
      <div class="form-grid">
        {fields.map((field) => {
          const value = values[field.name];
          if (field.kind === 'checkbox') return <CheckboxField key={field.name} name={field.name} label={field.label} checked={value === true} onChange={(checked) => set(field.name, checked)} error={errorAt(field.name)} />;
          if (field.kind === 'select') return <SelectField key={field.name} name={field.name} label={field.label} value={String(value)} options={optionsWith(field.options ?? [], String(value))} onChange={(v) => set(field.name, v)} hint={field.hint} error={errorAt(field.name)} />;
          if (field.kind === 'lines') return <TextArea key={field.name} name={field.name} label={field.label} value={String(value)} onInput={(v) => set(field.name, v)} hint={field.hint ?? 'one per line'} error={errorAt(field.name)} />;
          if (field.kind === 'paragraph' || field.kind === 'json') return <TextArea key={field.name} name={field.name} label={field.label} value={String(value)} onInput={(v) => set(field.name, v)} hint={field.hint} error={errorAt(field.name)} />;
          return (
            <TextField
              key={field.name}
              name={field.name}
              label={field.label}
              type={field.kind === 'number' ? 'number' : field.kind === 'password' ? 'password' : 'text'}
              value={String(value)}
              onInput={(v) => set(field.name, v)}
              hint={record && field.kind === 'password' ? secretHint(field, record) : field.hint}
              autoComplete={field.kind === 'password' ? 'new-password' : 'off'}
              error={errorAt(field.name)}
            />
          );
        })}
      </div>
      <ErrorAlert message={at ? null : error} />
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
