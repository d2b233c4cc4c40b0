import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { ActionButton } from '../components/action-button';
import { DataTable } from '../components/data-table';
import { ErrorAlert } from '../components/error-alert';
import { formatValue } from '../components/format';
import { Page } from '../components/page';
import { KeyValueTable, fieldLabel } from '../components/settings-view';
import { useLoad } from '../components/use-load';
import type { Row } from '../api/types';
import { ClusterCollections, StateSyncSection } from './cluster-settings';

interface FailoverEntry { id: string; ts: string; from_role: string; to_role: string; cause: string; detail: string | null }
interface HealthSummary {
  warnings: string[];
  missing_peer_keys: string[];
  checks: { id: string; name: string; check_type: string; enabled: boolean; healthy: boolean | null; failures: number; detail: string | null }[];
}

const STATUS_SHOWN = ['role', 'configured_role', 'vrrp_state', 'peer_reachable', 'pfsync_state_count', 'priority_adjustment', 'failing_checks', 'running', 'state_sync', 'last_error'];

/**
 * High availability (issue 39): this node's live role, its peer and state sync, health, failover history; promote/demote;
 * the virtual addresses, health checks and state sync edited (pages/cluster-settings.tsx).
 */
export function ClusterPage() {
  const { api, can } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const status = useLoad(() => api.get<Record<string, unknown>>('/cluster/status'), `status-${generation}`);
  const pfsync = useLoad(() => api.get<Row | null>('/cluster/pfsync'), `pfsync-${generation}`);
  const summary = useLoad(() => api.get<HealthSummary>('/cluster/health-summary'), `summary-${generation}`);
  const history = useLoad(() => api.get<FailoverEntry[]>('/cluster/failover-history'), `history-${generation}`);
  const refresh = () => setGeneration((value) => value + 1);
  if (!can('ha:manage')) return <Page title="Cluster">High availability needs the ha:manage permission.</Page>;
  const statusEntries = STATUS_SHOWN.filter((key) => status.data && key in status.data).map((key): [string, string] => [fieldLabel(key), formatValue(status.data![key])]);
  const peer = pfsync.data ? `${String(pfsync.data.sync_peer ?? 'none')} on ${String(pfsync.data.sync_interface)}${pfsync.data.enabled === false ? ' (state sync off)' : ''}` : 'no state sync configured';
  return (
    <Page title="Cluster" help="High availability: the virtual addresses (VRRP) this node shares with its peer, connection state sync, health checks and the role changes.">
      <section class="panel" aria-label="Cluster status">
        <header class="panel-head">
          <h2>Cluster status</h2>
        </header>
        <ErrorAlert message={status.error ?? pfsync.error} />
        <KeyValueTable caption="Cluster status" entries={[['peer (state sync)', peer], ...statusEntries]} loading={status.loading && !status.data} />
        <div class="actions">
          <ActionButton
            run={async () => confirm('Promote this node? It takes the virtual addresses from its peer.') && (await api.post('/cluster/promote'))}
            onDone={refresh}
            onError={setError}
          >
            Promote
          </ActionButton>
          <ActionButton
            tone="danger"
            run={async () => confirm('Demote this node? It gives the virtual addresses to its peer.') && (await api.post('/cluster/demote'))}
            onDone={refresh}
            onError={setError}
          >
            Demote
          </ActionButton>
          <button type="button" class="secondary" onClick={refresh}>
            Refresh
          </button>
        </div>
        <ErrorAlert message={error} />
      </section>
      <ClusterCollections onChange={refresh} />
      <StateSyncSection pfsync={pfsync} onSaved={refresh} />
      <section class="panel" aria-label="Cluster health">
        <header class="panel-head">
          <h2>Cluster health</h2>
        </header>
        <ErrorAlert message={summary.error} />
        {summary.data && (summary.data.warnings.length === 0 ? <p>No warnings.</p> : (
          <ul aria-label="Warnings">
            {summary.data.warnings.map((warning) => <li key={warning}>{warning}</li>)}
          </ul>
        ))}
        <DataTable
          caption="Health check outcomes"
          rows={summary.data?.checks ?? []}
          empty="No health checks."
          rowKey={(row) => row.id}
          columns={[
            { key: 'name', label: 'Check' },
            { key: 'check_type', label: 'Type' },
            { key: 'healthy', label: 'Healthy', render: (row) => (row.healthy === null ? 'not running' : row.healthy ? 'yes' : 'no') },
            { key: 'failures', label: 'Failures in a row' },
            { key: 'detail', label: 'Detail' },
          ]}
        />
      </section>
      <section class="panel" aria-label="Failover history">
        <header class="panel-head">
          <h2>Failover history</h2>
        </header>
        <ErrorAlert message={history.error} />
        <DataTable
          caption="Role changes of the last 24 hours"
          rows={[...(history.data ?? [])].reverse()}
          empty="No role change in the last 24 hours."
          rowKey={(row) => row.id}
          columns={[
            { key: 'ts', label: 'Time' },
            { key: 'from_role', label: 'From' },
            { key: 'to_role', label: 'To' },
            { key: 'cause', label: 'Cause' },
            { key: 'detail', label: 'Detail' },
          ]}
        />
      </section>
    </Page>
  );
}
