import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ErrorAlert, Notice } from './error-alert';
import { formatValue } from './format';
import { RecordForm, type FieldSpec } from './record-form';
import { readForEditing, saveEdit, type Editing } from './record-editor';
import { fieldLabel, KeyValueTable } from './settings-view';
import { useLoad } from './use-load';

interface SettingsSectionProps {
  title: string;
  /** API path of the section: GET answers it with its ETag, PUT changes the fields sent. */
  path: string;
  writePermission: string;
  /** What may be changed; every other value of the section is shown read-only. */
  fields: readonly FieldSpec[];
  /** Values not shown at all (long lists, internals). */
  omit?: readonly string[];
  /** Sent with every save that changes something: which part of the section the fields belong to. */
  scope?: Record<string, unknown>;
}

/** Read-only rows: a secret's flag reads as "set" / "not set" under the secret's name, never its value. */
function displayEntries(record: Row, fields: readonly FieldSpec[], skip: ReadonlySet<string>): [string, string][] {
  const secretOf = new Map(fields.filter((field) => field.setFlag).map((field) => [field.setFlag!, field]));
  const labelOf = new Map(fields.map((field) => [field.name, field.label]));
  return Object.entries(record)
    .filter(([key]) => !skip.has(key))
    .map(([key, value]) => {
      const secret = secretOf.get(key);
      if (secret) return [secret.label, value === true ? 'set' : 'not set'];
      return [labelOf.get(key) ?? fieldLabel(key), formatValue(value)];
    });
}

/**
 * A settings section as a form for those who may change it: read with its ETag, edited, saved with PUT and
 * If-Match (a 412 reloads it and says so). Values the API computes are listed below the form; write-only
 * secrets show as "set" / "not set" with an empty field to replace them. Others see the values as a table.
 */
export function SettingsSection({ title, path, writePermission, fields, omit = [], scope }: SettingsSectionProps) {
  const { api, can } = useSession();
  const mayWrite = can(writePermission);
  const loaded = useLoad(() => readForEditing(api, path), path);
  const [current, setCurrent] = useState<Editing | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => {
    if (loaded.data) setCurrent(loaded.data);
  }, [loaded.data]);

  const record = current?.record;
  const editable = new Set(fields.flatMap((field) => (field.setFlag ? [field.name, field.setFlag] : [field.name])));
  const hidden = new Set([...omit, ...(mayWrite ? editable : [])]);
  const shown = record ? displayEntries(record, mayWrite ? [] : fields, hidden) : [];
  return (
    <section class="panel settings" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
      </header>
      <ErrorAlert message={loaded.error} />
      {mayWrite && current && (
        <RecordForm
          title={title}
          hideTitle
          fields={fields}
          record={current.record}
          submitLabel="Save"
          onSubmit={async (body) => {
            setSaved(null);
            const scoped = scope && Object.keys(body).length > 0 ? { ...scope, ...body } : body;
            const changed = await saveEdit(api, current, scoped, `${title} section`, setCurrent);
            // read back what is stored now (and its new ETag); this also empties the secret fields
            if (changed) setCurrent(await readForEditing(api, path));
            setSaved(changed ? `${title}: saved.` : 'Nothing changed.');
          }}
        />
      )}
      {saved && <Notice>{saved}</Notice>}
      {!mayWrite && !loaded.error && <p class="help">Changing these settings needs the {writePermission} permission.</p>}
      {!loaded.error && (shown.length > 0 || loaded.loading) && <KeyValueTable caption={mayWrite ? `${title}: current state` : title} entries={shown} loading={loaded.loading && !record} />}
    </section>
  );
}
