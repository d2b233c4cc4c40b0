import { useSession } from '../auth/session-context';
import { ErrorAlert } from './error-alert';
import { formatValue } from './format';
import { useLoad } from './use-load';

/** A settings section or status object, read-only, as a two-column table (field, value). */
export function SettingsView({ title, path, omit = [] }: { title: string; path: string; omit?: readonly string[] }) {
  const { api } = useSession();
  const section = useLoad(() => api.get<Record<string, unknown>>(path), path);
  const entries = Object.entries(section.data ?? {}).filter(([key]) => !omit.includes(key));
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
      </header>
      <ErrorAlert message={section.error} />
      {!section.error && (
        <div class="table-wrap">
          <table class="key-value">
            <caption>{title}</caption>
            <thead>
              <tr>
                <th scope="col">Setting</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {section.loading && !section.data && (
                <tr>
                  <td colSpan={2} class="empty">
                    Loading…
                  </td>
                </tr>
              )}
              {entries.map(([key, value]) => (
                <tr key={key}>
                  <th scope="row">{key.replace(/_/g, ' ')}</th>
                  <td>{formatValue(value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
