import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { CollectionSection } from '../components/collection-section';
import { DataTable } from '../components/data-table';
import { ErrorAlert } from '../components/error-alert';
import { formatValue } from '../components/format';
import { Page } from '../components/page';
import { KeyValueTable, fieldLabel } from '../components/settings-view';
import { useLoad } from '../components/use-load';

const entriesOf = (data: Record<string, unknown> | undefined, omit: readonly string[] = []): [string, string][] =>
  Object.entries(data ?? {})
    .filter(([key]) => !omit.includes(key))
    .map(([key, value]) => [fieldLabel(key), formatValue(value)]);

interface Preview {
  message: string;
  changes: { action: string; name: string; from: string | null; to: string | null }[];
}

/** OS packages: status, a check, and an install only after its preview (`GET /updates/preview`, apt-get -s). */
function OsUpdates() {
  const { api, can } = useSession();
  const status = useLoad(() => api.get<Record<string, unknown>>('/updates/status'), 'os-status');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const done = (answer: unknown) => setMessage((answer as { message?: string } | null)?.message ?? null);
  return (
    <section class="panel" aria-label="OS updates">
      <header class="panel-head">
        <h2>OS updates</h2>
      </header>
      <ErrorAlert message={status.error ?? error} />
      {!status.error && <KeyValueTable caption="OS update status" entries={entriesOf(status.data)} loading={status.loading && !status.data} />}
      <div class="actions">
        <ActionButton run={async () => done(await api.post('/updates/check'))} onDone={status.reload} onError={setError}>
          Check for updates
        </ActionButton>
        <ActionButton run={async () => setPreview(await api.get<Preview>('/updates/preview'))} onError={setError}>
          Preview install
        </ActionButton>
        {can('updates:install') && preview && (
          <ActionButton
            tone="primary"
            run={async () => {
              if (!confirm(`Install ${preview.changes.length} package change(s) as previewed?`)) return;
              done(await api.post('/updates/install'));
              setPreview(null);
            }}
            onDone={status.reload}
            onError={setError}
          >
            Install updates
          </ActionButton>
        )}
      </div>
      {message && <p role="status">{message}</p>}
      {preview && (
        <DataTable
          caption={`Install preview: ${preview.message}`}
          columns={[
            { key: 'action', label: 'Change' },
            { key: 'name', label: 'Package' },
            { key: 'from', label: 'From' },
            { key: 'to', label: 'To' },
          ]}
          rows={preview.changes as unknown as Row[]}
          empty="Nothing to install."
        />
      )}
    </section>
  );
}

/** Bulwark itself: version, release check, install of the latest signed release, rollback to a kept one. */
function ApplianceUpdates() {
  const { api, can } = useSession();
  const status = useLoad(() => api.get<Record<string, unknown>>('/updates/appliance/status'), 'appliance-status');
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const done = (answer: unknown) => setMessage((answer as { message?: string } | null)?.message ?? null);
  return (
    <section class="panel" aria-label="Appliance updates">
      <header class="panel-head">
        <h2>Appliance updates</h2>
      </header>
      <ErrorAlert message={status.error ?? error} />
      {!status.error && <KeyValueTable caption="Appliance version" entries={entriesOf(status.data, ['last_activation', 'release_notes'])} loading={status.loading && !status.data} />}
      <div class="actions">
        <ActionButton run={async () => done(await api.post('/updates/appliance/check'))} onDone={status.reload} onError={setError}>
          Check for a release
        </ActionButton>
        {can('updates:install') && (
          <>
            <ActionButton
              tone="primary"
              run={async () => confirm('Download, verify and switch to the latest release? Bulwark restarts, and returns to this release if the new one does not answer.') && done(await api.post('/updates/appliance/install'))}
              onDone={status.reload}
              onError={setError}
            >
              Install the latest release
            </ActionButton>
            <ActionButton
              tone="danger"
              run={async () => confirm('Return to the release before the last switch? Bulwark restarts.') && done(await api.post('/updates/appliance/rollback', {}))}
              onDone={status.reload}
              onError={setError}
            >
              Roll back
            </ActionButton>
          </>
        )}
      </div>
      {message && <p role="status">{message}</p>}
    </section>
  );
}

export function UpdatesPage() {
  return (
    <Page title="Updates" help="Operating-system packages and Bulwark's own releases. The update schedule is on the System page.">
      <OsUpdates />
      <ApplianceUpdates />
      <CollectionSection
        title="Update history"
        path="/updates/history"
        columns={[
          { key: 'created_at', label: 'When' },
          { key: 'action', label: 'Action' },
          { key: 'status', label: 'Status' },
          { key: 'details', label: 'Details' },
        ]}
      />
    </Page>
  );
}
