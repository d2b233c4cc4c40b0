import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice } from '../components/error-alert';
import { FormActions, TextArea } from '../components/fields';
import { KeyValueTable } from '../components/settings-view';
import { useSubmit } from '../components/use-submit';

interface ThirdPartyPreview {
  valid: boolean;
  kind: string;
  version: string | null;
  interfaces_found: string[];
  interfaces_need_mapping: string[];
  counts: Record<string, number>;
  skipped: unknown[];
  error: string | null;
}

/** `lan=eth1` lines as the API's interface map; a line without `=` is left for the API to refuse by name. */
function interfaceMap(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.indexOf('=');
      return at < 0 ? [line, ''] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    });
  return Object.fromEntries(entries);
}

/**
 * An OPNsense or pfSense config.xml: previewed first (what maps, what needs an interface, what is skipped and
 * why; nothing written), then imported as one change that stays pending until applied.
 */
export function ThirdPartyImport() {
  const { api, can } = useSession();
  const [file, setFile] = useState<File | null>(null);
  const [mapping, setMapping] = useState('');
  const [preview, setPreview] = useState<ThirdPartyPreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const body = async () => ({ xml: await file!.text(), ...(mapping.trim() ? { interface_map: interfaceMap(mapping) } : {}) });
  const { busy, error: previewError, submit } = useSubmit(async () => {
    setPreview(null);
    setMessage(null);
    if (!file) throw new Error('Choose a config.xml first.');
    setPreview(await api.request<ThirdPartyPreview>('POST', '/config/preview-thirdparty', { body: await body(), changesNothing: true }).then((answer) => answer.data));
  });
  if (!can('backup:read')) return null;
  return (
    <section class="panel" aria-label="Import from OPNsense or pfSense">
      <header class="panel-head">
        <h2>Import from OPNsense or pfSense</h2>
      </header>
      <form class="record-form" aria-label="Third-party import" onSubmit={submit}>
        <label class="field">
          <span>Their config.xml</span>
          <input name="thirdparty" type="file" accept=".xml,application/xml,text/xml" onChange={(event) => setFile((event.currentTarget as HTMLInputElement).files?.[0] ?? null)} />
        </label>
        <TextArea name="interface_map" label="Interface map" value={mapping} onInput={setMapping} hint="one per line: their name=this appliance's interface, e.g. lan=eth1" />
        <ErrorAlert message={previewError} />
        <FormActions>
          <button type="submit" disabled={busy}>
            Preview import
          </button>
        </FormActions>
      </form>
      {preview && (
        <KeyValueTable
          caption="Import preview"
          entries={[
            ['Readable', preview.valid ? 'yes' : `no: ${preview.error ?? 'unknown format'}`],
            ['From', `${preview.kind}${preview.version ? ` ${preview.version}` : ''}`],
            ['Interfaces found', preview.interfaces_found.join(', ') || 'none'],
            ['Interfaces still to map', preview.interfaces_need_mapping.join(', ') || 'none'],
            ...Object.entries(preview.counts)
              .filter(([, count]) => count > 0)
              .map(([kind, count]): [string, string] => [`To import: ${kind.replace(/_/g, ' ')}`, String(count)]),
          ]}
        />
      )}
      {preview && (
        <DataTable
          caption="Not imported, with the reason"
          rows={preview.skipped as Row[]}
          columns={[
            { key: 'source', label: 'Where' },
            { key: 'element', label: 'What' },
            { key: 'reason', label: 'Why not' },
          ]}
          empty="Everything maps."
        />
      )}
      {preview?.valid && can('backup:write') && (
        <div class="actions">
          <ActionButton
            tone="primary"
            run={async () => {
              const answer = await api.post<{ message: string }>('/config/import-thirdparty', await body());
              setMessage(answer.message);
              setPreview(null);
            }}
            onError={setError}
          >
            Import (pending until applied)
          </ActionButton>
        </div>
      )}
      <ErrorAlert message={error} />
      {message && <Notice>{message}</Notice>}
    </section>
  );
}
