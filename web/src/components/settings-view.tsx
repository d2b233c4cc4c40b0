import type { ComponentChildren } from 'preact';
import { useSession } from '../auth/session-context';
import { ErrorAlert } from './error-alert';
import { formatValue } from './format';
import { useLoad } from './use-load';

/** Settings or status values as a two-column table (setting, value). */
export function KeyValueTable({ caption, entries, loading }: { caption: string; entries: readonly [string, ComponentChildren][]; loading?: boolean }) {
  return (
    <div class="table-wrap">
      <table class="key-value">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Setting</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {loading && (
            <tr>
              <td colSpan={2} class="empty">
                Loading…
              </td>
            </tr>
          )}
          {entries.map(([key, value]) => (
            <tr key={key}>
              <th scope="row">{key}</th>
              <td>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A field name as a reader sees it: `lockout_duration_secs` → "lockout duration secs". */
export const fieldLabel = (key: string) => key.replace(/_/g, ' ');

/** A settings section or status object, read-only. */
export function SettingsView({ title, path, omit = [] }: { title: string; path: string; omit?: readonly string[] }) {
  const { api } = useSession();
  const section = useLoad(() => api.get<Record<string, unknown>>(path), path);
  const entries = Object.entries(section.data ?? {})
    .filter(([key]) => !omit.includes(key))
    .map(([key, value]): [string, string] => [fieldLabel(key), formatValue(value)]);
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
      </header>
      <ErrorAlert message={section.error} />
      {!section.error && <KeyValueTable caption={title} entries={entries} loading={section.loading && !section.data} />}
    </section>
  );
}
