import { useSession } from '../auth/session-context';
import type { Row } from '../api/types';
import { ActionButton } from '../components/action-button';
import { CollectionSection, type RowActionReport } from '../components/collection-section';
import { formatTime } from '../components/format';
import type { FieldSpec } from '../components/record-form';

const PROVIDER_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'kind', label: 'Provider', kind: 'select', options: ['cloudflare', 'route53', 'digitalocean', 'rfc2136', 'manual'] },
  { name: 'zone', label: 'Zone', kind: 'text', hint: 'e.g. example.org' },
  { name: 'api_token', label: 'API token', kind: 'password', setFlag: 'has_token', hint: 'write-only: never shown again' },
  { name: 'aws_secret_key', label: 'AWS secret key', kind: 'password', setFlag: 'has_secret', hint: 'Route 53 only; write-only' },
  { name: 'extra', label: 'Provider settings (JSON)', kind: 'json', hint: 'e.g. {"aws_access_key_id":"…"} or {"server":"192.0.2.53","key_name":"…"}' },
];

const TARGET_FIELDS: readonly FieldSpec[] = [
  { name: 'kind', label: 'Export to', kind: 'select', options: ['file', 'webhook', 'local-tls-store'] },
  { name: 'config', label: 'Settings (JSON)', kind: 'json', hint: 'file: {"cert_path":"…","key_path":"…"}; webhook: {"url":"…"}' },
];

function TestProvider({ row, report }: { row: Row; report: RowActionReport }) {
  const { api, can } = useSession();
  if (!can('settings:write')) return null;
  const test = async () => {
    const answer = await api.post<{ ok: boolean; message: string }>(`/acme/dns-providers/${encodeURIComponent(String(row.id))}/test`);
    report.done(`${String(row.name)}: ${answer.message}`);
  };
  return (
    <ActionButton run={test} onError={report.error}>
      Test
    </ActionButton>
  );
}

/** The DNS providers ACME's dns-01 challenges (and dynamic DNS) write through; a test adds and removes a TXT record. */
export function DnsProviders() {
  return (
    <CollectionSection
      title="DNS providers"
      itemName="DNS provider"
      path="/acme/dns-providers"
      writePermission="settings:write"
      readEach={false}
      deletable
      columns={[
        { key: 'name', label: 'Name' },
        { key: 'kind', label: 'Provider' },
        { key: 'zone', label: 'Zone' },
        { key: 'has_token', label: 'Token set' },
      ]}
      createFields={PROVIDER_FIELDS}
      editFields={PROVIDER_FIELDS}
      rowActions={(row, _reload, report) => <TestProvider row={row} report={report} />}
    />
  );
}

/** Where one ACME certificate is pushed after each issue or renewal. */
export function ExportTargets({ certificate }: { certificate: Row }) {
  return (
    <CollectionSection
      title={`Export targets of ${String(certificate.common_name)}`}
      itemName="export target"
      path={`/acme/certs/${encodeURIComponent(String(certificate.id))}/targets`}
      itemPath={(row) => `/acme/export-targets/${encodeURIComponent(String(row.id))}`}
      writePermission="settings:write"
      readEach={false}
      deletable
      describe={(row) => `the ${String(row.kind)} export target`}
      columns={[
        { key: 'kind', label: 'Export to' },
        { key: 'config', label: 'Settings', render: (row) => JSON.stringify(row.config) },
        { key: 'last_run_at', label: 'Last run', render: (row) => formatTime(row.last_run_at as string | null) },
        { key: 'last_run_ok', label: 'Succeeded' },
        { key: 'last_run_error', label: 'Error' },
      ]}
      createFields={TARGET_FIELDS}
      editFields={TARGET_FIELDS}
    />
  );
}
