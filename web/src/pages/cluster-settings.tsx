import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { CollectionSection } from '../components/collection-section';
import { ErrorAlert, Notice } from '../components/error-alert';
import { RecordForm, type FieldSpec } from '../components/record-form';
import type { Loaded } from '../components/use-load';

/** The cluster's writes are ha:manage's (docs/high-availability.md); the page itself needs it too. */
const PERMISSION = 'ha:manage';

const CARP_FIELDS: readonly FieldSpec[] = [
  { name: 'vhid', label: 'Virtual router id', kind: 'number', required: true, hint: '1–255 (VRRP VHID), the same on both nodes' },
  { name: 'virtual_ip', label: 'Virtual address', kind: 'text', required: true },
  { name: 'prefix', label: 'Prefix length', kind: 'number', required: true, hint: 'e.g. 24' },
  { name: 'interface', label: 'Interface', kind: 'text', required: true },
  { name: 'password', label: 'Password', kind: 'password', hint: 'shared with the peer: 1–8 letters, digits or . _ + = -; write-only, never shown again' },
];

/** The check types this build runs (the API refuses http_get and process_running with 400). */
const CHECK_TYPES = ['ping', 'tcp_port', 'pf_status'];

const HEALTH_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'check_type', label: 'Check', kind: 'select', options: CHECK_TYPES },
  { name: 'target', label: 'Target', kind: 'text', hint: 'ping: an IP address; tcp_port: address:port; pf_status: empty' },
  { name: 'interval_secs', label: 'Interval (seconds)', kind: 'number', hint: 'default 10' },
  { name: 'timeout_secs', label: 'Timeout (seconds)', kind: 'number', hint: 'default 5' },
  { name: 'failures_before_down', label: 'Failures before down', kind: 'number', hint: 'default 3: then this node lowers its VRRP priority' },
  { name: 'enabled', label: 'Enabled', kind: 'checkbox', initial: true },
];

const PFSYNC_FIELDS: readonly FieldSpec[] = [
  { name: 'sync_interface', label: 'Sync interface', kind: 'text', hint: 'the link to the peer that carries the state updates' },
  { name: 'sync_peer', label: 'Peer address', kind: 'text', hint: 'the peer on that link' },
  { name: 'enabled', label: 'State sync on', kind: 'checkbox', initial: true },
  { name: 'defer', label: 'Defer packets until the peer has the state', kind: 'checkbox' },
  { name: 'latency_profile', label: 'Latency profile', kind: 'select', options: ['conservative', 'tight', 'aggressive'] },
  { name: 'heartbeat_iface', label: 'Heartbeat interface', kind: 'text', hint: 'empty: the sync interface' },
  { name: 'heartbeat_interval_ms', label: 'Heartbeat interval (ms)', kind: 'number', hint: '100–60000; empty: the default' },
];

/** The virtual addresses (VRRP) and the health checks: tables with add, edit (If-Match) and delete for ha:manage. */
export function ClusterCollections({ onChange }: { onChange(): void }) {
  const { api } = useSession();
  const [ran, setRan] = useState<string | null>(null);
  const [runError, setRunError] = useState<string | null>(null);
  return (
    <>
      <CollectionSection
        title="Virtual addresses"
        itemName="virtual address"
        path="/cluster/carp"
        writePermission={PERMISSION}
        deletable
        describe={(row) => `virtual address ${String(row.virtual_ip)} (VHID ${String(row.vhid)})`}
        empty="No virtual address: VRRP has nothing to share."
        columns={[
          { key: 'vhid', label: 'VHID' },
          { key: 'virtual_ip', label: 'Address', render: (row: Row) => `${String(row.virtual_ip)}/${String(row.prefix)}` },
          { key: 'interface', label: 'Interface' },
        ]}
        createFields={CARP_FIELDS}
        editFields={CARP_FIELDS}
      />
      <CollectionSection
        title="Health checks"
        itemName="health check"
        path="/cluster/health"
        writePermission={PERMISSION}
        deletable
        empty="No health check."
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'check_type', label: 'Check' },
          { key: 'target', label: 'Target' },
          { key: 'interval_secs', label: 'Every', render: (row: Row) => `${String(row.interval_secs)} s` },
          { key: 'failures_before_down', label: 'Down after' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={HEALTH_FIELDS}
        editFields={HEALTH_FIELDS}
      />
      <div class="actions">
        <ActionButton
          run={async () => {
            setRan(null);
            await api.post('/cluster/health/run');
          }}
          onDone={() => {
            setRan('The checks are running; their outcomes show under Cluster health.');
            onChange();
          }}
          onError={setRunError}
        >
          Run the health checks now
        </ActionButton>
      </div>
      <ErrorAlert message={runError} />
      {ran && <Notice>{ran}</Notice>}
    </>
  );
}

/**
 * Connection state sync: the settings as a form (PUT /cluster/pfsync, applied at once). The API answers no ETag here,
 * so the save is plain; a first save needs the sync interface.
 */
export function StateSyncSection({ pfsync, onSaved }: { pfsync: Loaded<Row | null>; onSaved(): void }) {
  const { api } = useSession();
  const [saved, setSaved] = useState<string | null>(null);
  const record = pfsync.data ?? null;
  return (
    <section class="panel settings" aria-label="State sync">
      <header class="panel-head">
        <h2>State sync</h2>
      </header>
      <ErrorAlert message={pfsync.error} />
      {pfsync.data !== undefined && (
        <RecordForm
          key={record ? 'set' : 'unset'}
          title="State sync"
          hideTitle
          fields={PFSYNC_FIELDS}
          record={record}
          submitLabel="Save"
          onSubmit={async (body) => {
            setSaved(null);
            if (Object.keys(body).length === 0) return setSaved('Nothing changed.');
            await api.put('/cluster/pfsync', body);
            setSaved('State sync: saved and applied.');
            onSaved();
          }}
        />
      )}
      {saved && <Notice>{saved}</Notice>}
    </section>
  );
}
