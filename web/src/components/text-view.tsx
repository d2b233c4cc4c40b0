import { useSession } from '../auth/session-context';
import { ErrorAlert } from './error-alert';
import { useLoad } from './use-load';

/** A plain-text answer of the API (metrics, generated rules), shown as it is, read-only. */
export function TextView({ title, path, text }: { title: string; path: string; text?: (data: unknown) => string }) {
  const { api } = useSession();
  const loaded = useLoad(async () => (text ? text(await api.get<unknown>(path)) : (await api.blob(path)).text()), path);
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
      </header>
      <ErrorAlert message={loaded.error} />
      {!loaded.error && (
        <pre class="output" tabIndex={0} aria-label={title}>
          {loaded.data ?? 'Loading…'}
        </pre>
      )}
    </section>
  );
}
