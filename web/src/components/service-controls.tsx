import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { ActionButton } from './action-button';
import { ErrorAlert } from './error-alert';
import { SettingsView } from './settings-view';

/**
 * A daemon as an area page shows it: its status, read by everyone who may read the area, and its controls for
 * those who may change it (time service, DHCP, reverse proxy, IDS).
 */
export function ServiceStatus({ status, ...controls }: {
  status: { title: string; path: string; omit?: readonly string[] };
} & Parameters<typeof ServiceControls>[0]) {
  return (
    <>
      <SettingsView title={status.title} path={status.path} omit={status.omit} />
      <ServiceControls {...controls} />
    </>
  );
}

/**
 * Buttons that each POST one action path of a daemon (apply, start, stop, restart), shown only to an account holding
 * `writePermission`; the answer's `message` is announced, a refusal shown in the alert.
 */
export function ServiceControls({ title, writePermission, actions }: {
  title: string;
  writePermission: string;
  /** Each action's full API path, written out (`/time/restart`) so the console coverage test sees it. */
  actions: readonly { path: string; label: string }[];
}) {
  const { api, can } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  if (!can(writePermission)) return null;
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
      </header>
      <div class="actions">
        {actions.map(({ path, label }) => (
          <ActionButton
            key={path}
            run={async () => {
              setMessage(null);
              const answer = await api.post<{ message?: string }>(path);
              setMessage(answer?.message ?? `${label}: done`);
            }}
            onError={setError}
          >
            {label}
          </ActionButton>
        ))}
      </div>
      <ErrorAlert message={error} />
      {message && <p role="status">{message}</p>}
    </section>
  );
}
