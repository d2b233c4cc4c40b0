import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { CollectionSection } from '../components/collection-section';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { TextField } from '../components/fields';
import { formatTime } from '../components/format';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';
import { SettingsView } from '../components/settings-view';
import { ThirdPartyImport } from './thirdparty-import';

const RETENTION_FIELDS: readonly FieldSpec[] = [
  { name: 'max_versions', label: 'Versions kept', kind: 'number', hint: 'empty: no limit' },
  { name: 'max_days', label: 'Days kept', kind: 'number', hint: 'empty: no limit' },
];

const OBJECT_STORAGE_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Upload backups', kind: 'checkbox' },
  { name: 'endpoint', label: 'Endpoint', kind: 'text', sendEmpty: true, hint: 'S3-compatible service URL' },
  { name: 'bucket', label: 'Bucket', kind: 'text', sendEmpty: true },
  { name: 'region', label: 'Region', kind: 'text' },
  { name: 'prefix', label: 'Key prefix', kind: 'text', sendEmpty: true },
  { name: 'path_style', label: 'Path-style addresses', kind: 'checkbox' },
  { name: 'access_key_id', label: 'Access key id', kind: 'text', sendEmpty: true },
  { name: 'secret_access_key', label: 'Secret access key', kind: 'password', setFlag: 'has_secret_access_key' },
  { name: 'backup_passphrase', label: 'Backup passphrase', kind: 'password', setFlag: 'has_backup_passphrase' },
  { name: 'upload_on_save', label: 'Upload on every saved version', kind: 'checkbox' },
  { name: 'schedule_hours', label: 'Upload every (hours)', kind: 'number', hint: '0: not on a schedule' },
  { name: 'allow_http', label: 'Allow plain HTTP', kind: 'checkbox' },
  { name: 'allowed_addresses', label: 'Allowed service addresses', kind: 'lines', hint: 'private or local addresses the service may have, one per line' },
];

interface Preview {
  title: string;
  text: string;
  /** What "go ahead" does, when the user may. */
  proceed?: { label: string; run(): Promise<unknown> };
}

/** A restore or import preview: the API's summary and unified diff, then the action itself. */
function PreviewPanel({ preview, onClose, onDone }: { preview: Preview; onClose(): void; onDone(message: string): void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const proceed = async () => {
    setBusy(true);
    setError(null);
    try {
      const answer = (await preview.proceed!.run()) as { message?: string } | undefined;
      onDone(answer?.message ?? `${preview.proceed!.label}: done`);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-label={preview.title}>
      <header class="panel-head">
        <h2>{preview.title}</h2>
      </header>
      <pre class="diff">{preview.text}</pre>
      <ErrorAlert message={error} />
      <div class="form-actions">
        {preview.proceed && (
          <button type="button" class="danger" disabled={busy} onClick={proceed}>
            {preview.proceed.label}
          </button>
        )}
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}

const describePreview = (answer: Record<string, unknown>) => {
  const { unified, diff, ...rest } = answer as { unified?: string; diff?: { unified?: string; summary?: unknown } };
  const text = unified ?? diff?.unified ?? '';
  return `${JSON.stringify({ ...rest, ...(diff?.summary ? { summary: diff.summary } : {}) }, null, 2)}\n\n${text || '(no differences)'}`;
};

/** Two versions compared (numbers, `active` or `current`). */
function DiffViewer() {
  const { api } = useSession();
  const [from, setFrom] = useState('active');
  const [to, setTo] = useState('current');
  const [diff, setDiff] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const compare = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const answer = await api.get<{ unified: string; summary: Record<string, number> }>('/config/diff', { from, to });
      setDiff(`${answer.summary.added} added, ${answer.summary.changed} changed, ${answer.summary.removed} removed\n\n${answer.unified || '(identical)'}`);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <section class="panel" aria-label="Compare versions">
      <h2>Compare versions</h2>
      <form class="inline-form" onSubmit={compare}>
        <TextField label="From" name="from" value={from} onInput={setFrom} hint="a version number, active or current" />
        <TextField label="To" name="to" value={to} onInput={setTo} />
        <button type="submit">Compare</button>
      </form>
      <ErrorAlert message={error} />
      {diff !== null && <pre class="diff">{diff}</pre>}
    </section>
  );
}

/** Export (download, secrets redacted) and import of a configuration document, previewed first. */
function ExportImport({ onPreview }: { onPreview(preview: Preview): void }) {
  const { api, can } = useSession();
  const [download, setDownload] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const exportNow = async () => {
    setError(null);
    try {
      const document = await api.get<unknown>('/config/export');
      if (download) URL.revokeObjectURL(download);
      setDownload(URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: 'application/json' })));
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const importFile = async (file: File | undefined) => {
    if (!file) return;
    setError(null);
    try {
      const document = JSON.parse(await file.text()) as Record<string, unknown>;
      const answer = await api.post<Record<string, unknown>>('/config/import-preview', document);
      onPreview({
        title: `Import of ${file.name}`,
        text: describePreview(answer),
        proceed: can('backup:write') ? { label: 'Import and apply', run: () => api.post('/config/import', document) } : undefined,
      });
    } catch (failure) {
      setError(failure instanceof SyntaxError ? `${file.name} is not a JSON export document` : messageOf(failure));
    }
  };
  return (
    <section class="panel" aria-label="Export and import">
      <h2>Export and import</h2>
      <div class="inline-form">
        <button type="button" onClick={exportNow}>
          Export configuration
        </button>
        {download && (
          <a href={download} download="bulwark-configuration.json">
            Download bulwark-configuration.json
          </a>
        )}
        <label class="field inline">
          <span>Import a configuration file</span>
          <input name="import" type="file" accept="application/json,.json" onChange={(event) => importFile((event.currentTarget as HTMLInputElement).files?.[0])} />
        </label>
      </div>
      <ErrorAlert message={error} />
    </section>
  );
}

export function ConfigurationPage() {
  const { api, can } = useSession();
  const [preview, setPreview] = useState<Preview | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);

  const previewRestore = async (row: Row) => {
    setError(null);
    try {
      const version = Number(row.version);
      const answer = await api.post<Record<string, unknown>>('/config/restore-preview', { version });
      setPreview({
        title: `Restore of version ${version}`,
        text: describePreview(answer),
        proceed: can('backup:write') ? { label: `Restore version ${version} and apply`, run: () => api.post('/config/restore', { version }) } : undefined,
      });
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const save = async () => {
    setError(null);
    try {
      const comment = prompt('Comment for this version (optional)') ?? undefined;
      await api.post('/config/save', comment ? { comment } : {});
      setGeneration((n) => n + 1);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  return (
    <Page title="Configuration" help="Every applied or saved configuration is a version: compare, restore (after a preview), export and import.">
      <SettingsView key={`version-${generation}`} title="Running version" path="/config/version" omit={['objects', 'commit_confirm']} />
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <ErrorAlert message={error} />
      {preview && (
        <PreviewPanel
          preview={preview}
          onClose={() => setPreview(null)}
          onDone={(text) => {
            setPreview(null);
            setMessage(text);
            setGeneration((n) => n + 1);
          }}
        />
      )}
      {can('backup:write') && (
        <p>
          <button type="button" onClick={save}>
            Save current configuration as a version
          </button>
        </p>
      )}
      <CollectionSection
        key={`history-${generation}`}
        title="History"
        path="/config/history"
        query={{ limit: 50 }}
        empty="No versions yet: applying or saving records one."
        columns={[
          { key: 'version', label: 'Version' },
          { key: 'created_at', label: 'Time', render: (row) => formatTime(row.created_at as string) },
          { key: 'created_by', label: 'By' },
          { key: 'source', label: 'Source' },
          { key: 'comment', label: 'Comment' },
          { key: 'active', label: 'Running' },
          { key: 'rolled_back', label: 'Rolled back' },
        ]}
        rowActions={(row) => (
          <button type="button" class="secondary" onClick={() => previewRestore(row)}>
            Preview restore
          </button>
        )}
      />
      {can('backup:read') && <DiffViewer />}
      {can('backup:read') && <ExportImport onPreview={setPreview} />}
      <ThirdPartyImport />
      <SettingsSection title="Version retention" path="/config/retention" writePermission="backup:write" fields={RETENTION_FIELDS} />
      <SettingsSection title="Object storage backups" path="/backup/objstore/config" writePermission="backup:write" fields={OBJECT_STORAGE_FIELDS} />
    </Page>
  );
}
