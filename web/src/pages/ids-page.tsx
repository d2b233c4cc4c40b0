import { AiAnalysis } from './ids-ai';
import { NeedsPermission } from '../components/needs-permission';
import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { CollectionSection } from '../components/collection-section';
import { DataTable } from '../components/data-table';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { formatTime } from '../components/format';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';
import { ServiceStatus } from '../components/service-controls';
import { SearchForm } from '../components/search-form';

const ENGINE_FIELDS: readonly FieldSpec[] = [
  { name: 'mode', label: 'Mode', kind: 'select', options: ['disabled', 'ids', 'ips'], hint: 'ids: alert only; ips: also drop' },
  { name: 'interfaces', label: 'Interfaces', kind: 'lines', hint: 'one interface name per line' },
  { name: 'home_net', label: 'Home networks', kind: 'lines', hint: 'one CIDR per line' },
  { name: 'external_net', label: 'External networks', kind: 'lines' },
  { name: 'alert_retention_days', label: 'Keep alerts for (days)', kind: 'number' },
];

/** Full-text search over the loaded SIDs (GET /ids/rules/search?q=). */
function RuleSearch() {
  const { api } = useSession();
  const [rules, setRules] = useState<Row[] | null>(null);
  return (
    <section class="panel" aria-label="Rule search">
      <h2>Rule search</h2>
      <SearchForm label="Search rules" name="q" button="Search" search={async (query) => setRules(await api.get<Row[]>('/ids/rules/search', { q: query, limit: 50 }))}>
        {rules && (
          <DataTable
            caption="Matching rules"
            rows={rules}
            empty="No rule matches."
            columns={[
              { key: 'sid', label: 'SID' },
              { key: 'msg', label: 'Message' },
              { key: 'classtype', label: 'Class' },
              { key: 'severity', label: 'Severity' },
              { key: 'enabled', label: 'Enabled' },
              { key: 'hit_count', label: 'Hits' },
            ]}
          />
        )}
      </SearchForm>
    </section>
  );
}

export function IdsPage() {
  const { api, can } = useSession();
  const [error, setError] = useState<string | null>(null);
  return (
    <Page title="IDS" help="Intrusion detection and prevention (Suricata): alerts, rulesets and rules.">
      <ServiceStatus
        status={{ title: 'Engine', path: '/ids/stats', omit: ['severity_counts', 'top_signatures', 'top_sources', 'stats'] }}
        title="Engine control"
        writePermission="ids:write"
        actions={[{ path: '/ids/reload', label: 'Reload rules' }]}
      />
      <SettingsSection title="Engine settings" path="/ids/config" writePermission="ids:write" fields={ENGINE_FIELDS} />
      <ErrorAlert message={error} />
      <CollectionSection
        title="Alerts"
        path="/ids/alerts"
        query={{ limit: 100 }}
        refreshMs={10_000}
        empty="No alerts."
        columns={[
          { key: 'timestamp', label: 'Time', render: (row) => formatTime(row.timestamp as string) },
          { key: 'severity', label: 'Severity' },
          { key: 'signature_msg', label: 'Signature' },
          { key: 'src_ip', label: 'Source' },
          { key: 'dst_ip', label: 'Destination' },
          { key: 'action', label: 'Action' },
          { key: 'acknowledged', label: 'Acknowledged' },
        ]}
        rowActions={(row, reload) =>
          can('ids:write') && !row.acknowledged ? (
            <ActionButton run={() => api.put(`/ids/alerts/${String(row.id)}/acknowledge`, {})} onDone={reload} onError={setError}>
              Acknowledge
            </ActionButton>
          ) : null
        }
      />
      <CollectionSection
        title="Rulesets"
        path="/ids/rulesets"
        writePermission="ids:write"
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'rule_format', label: 'Format' },
          { key: 'enabled', label: 'Enabled' },
          { key: 'rule_count', label: 'Rules' },
          { key: 'last_updated', label: 'Updated', render: (row) => formatTime(row.last_updated as string | null) },
        ]}
        rowActions={(row, reload) =>
          can('ids:write') ? (
            <ActionButton run={() => api.put(`/ids/rulesets/${String(row.id)}`, { enabled: !row.enabled })} onDone={reload} onError={setError}>
              {row.enabled ? 'Disable' : 'Enable'}
            </ActionButton>
          ) : null
        }
      />
      <RuleSearch />
      <CollectionSection
        title="Suppressions"
        itemName="suppression"
        path="/ids/suppressions"
        writePermission="ids:write"
        deletable
        describe={(row) => `the suppression of signature ${String(row.sid)}`}
        empty="No signature is suppressed."
        columns={[
          { key: 'sid', label: 'Signature id' },
          { key: 'suppress_type', label: 'Matching' },
          { key: 'ip_cidr', label: 'Address', render: (row) => (row.ip_cidr === null ? 'every address' : String(row.ip_cidr)) },
        ]}
        createFields={[
          { name: 'sid', label: 'Signature id', kind: 'number' },
          { name: 'suppress_type', label: 'Matching', kind: 'select', options: ['src', 'dst', 'both'], hint: 'which side of the alert the address is' },
          { name: 'ip_cidr', label: 'Address', kind: 'text', hint: 'address or CIDR; empty: every address' },
        ]}
      />
      <AiAnalysis />
      <NeedsPermission permission="settings:read" what="The alert store's size">
        <SettingsSection
          title="Alert store"
          path="/settings/ids-alerts"
          writePermission="settings:write"
          fields={[
            { name: 'max_mb', label: 'Largest size (MB)', kind: 'number', hint: '8 to 512' },
            { name: 'max_age_secs', label: 'Oldest alert kept (seconds)', kind: 'number', hint: '3600 to 604800' },
          ]}
        />
      </NeedsPermission>
    </Page>
  );
}
