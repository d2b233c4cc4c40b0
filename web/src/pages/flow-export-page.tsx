import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice } from '../components/error-alert';
import { formatValue } from '../components/format';
import { Page } from '../components/page';
import { RecordForm, type FieldSpec } from '../components/record-form';
import { KeyValueTable, fieldLabel } from '../components/settings-view';
import { useLoad } from '../components/use-load';

interface ExporterStatus {
  exporter: string;
  running: boolean;
  simulated: boolean;
  interfaces: { interface: string; ifindex: number | null; running: boolean; pid: number | null; restarts: number; last_error: string | null }[];
  collectors: string[];
  last_error: string | null;
}
interface FlowExportView { config: Row; status: ExporterStatus }

const FLOW_EXPORT_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Enabled', kind: 'checkbox' },
  { name: 'protocol', label: 'Protocol', kind: 'select', options: ['ipfix', 'netflow9'], hint: 'IPFIX (NetFlow v10) or NetFlow v9' },
  { name: 'collectors', label: 'Collectors', kind: 'lines', hint: 'host:port ([v6]:port), one per line, at most 4; every flow goes to all of them' },
  { name: 'interfaces', label: 'Interfaces', kind: 'lines', hint: 'interfaces whose traffic is exported, one per line' },
  { name: 'active_timeout_secs', label: 'Active timeout (seconds)', kind: 'number', hint: 'a flow still active is exported after this long' },
  { name: 'inactive_timeout_secs', label: 'Inactive timeout (seconds)', kind: 'number', hint: 'a flow idle this long is exported' },
  { name: 'sampling', label: 'Sampling (1 in N packets)', kind: 'number', hint: '1: every packet' },
];

/** Flow export (docs/flow-export.md): NetFlow v9 / IPFIX to collectors; saving applies at once, a refusal keeps the previous export. */
export function FlowExportPage() {
  const { api, can } = useSession();
  const [generation, setGeneration] = useState(0);
  const [saved, setSaved] = useState<string | null>(null);
  const view = useLoad(() => api.get<FlowExportView>('/settings/flow-export'), `flow-export-${generation}`);
  const status = view.data?.status;
  const statusEntries: [string, string][] = status
    ? [
        ['exporter', `${status.exporter}${status.simulated ? ' (simulated)' : ''}`],
        ['running', formatValue(status.running)],
        ['collectors (resolved)', status.collectors.length ? status.collectors.join(', ') : 'none'],
        ['last error', formatValue(status.last_error)],
      ]
    : [];
  return (
    <Page title="Flow export" help="The flows of traffic through the appliance, exported as NetFlow v9 or IPFIX to collectors (softflowd on Debian). A save applies at once; a refused one keeps the previous export.">
      <section class="panel settings" aria-label="Flow export settings">
        <header class="panel-head">
          <h2>Flow export settings</h2>
        </header>
        <ErrorAlert message={view.error} />
        {view.data && can('settings:write') && (
          <RecordForm
            title="Flow export settings"
            hideTitle
            fields={FLOW_EXPORT_FIELDS}
            record={view.data.config}
            submitLabel="Save"
            onSubmit={async (body) => {
              setSaved(null);
              await api.put('/settings/flow-export', body);
              setSaved('Saved and applied.');
              setGeneration((value) => value + 1);
            }}
          />
        )}
        {view.data && !can('settings:write') && (
          <KeyValueTable caption="Flow export settings" entries={Object.entries(view.data.config).map(([key, value]): [string, string] => [fieldLabel(key), formatValue(value)])} />
        )}
        {saved && <Notice>{saved}</Notice>}
      </section>
      <section class="panel" aria-label="Exporter status">
        <header class="panel-head">
          <h2>Exporter status</h2>
          <button type="button" class="secondary" onClick={() => setGeneration((value) => value + 1)}>
            Refresh
          </button>
        </header>
        <KeyValueTable caption="Exporter status" entries={statusEntries} loading={view.loading && !view.data} />
        <DataTable
          caption="Exporters per interface"
          rows={status?.interfaces ?? []}
          empty="No interface is exported."
          rowKey={(row) => row.interface}
          columns={[
            { key: 'interface', label: 'Interface' },
            { key: 'running', label: 'Running' },
            { key: 'pid', label: 'Process' },
            { key: 'restarts', label: 'Restarts' },
            { key: 'last_error', label: 'Last error' },
          ]}
        />
      </section>
    </Page>
  );
}
