import { useState } from 'preact/hooks';
import type { Row } from '../api/types';
import { DnsProviders, ExportTargets } from './acme-sections';
import { CollectionSection } from '../components/collection-section';
import { formatTime } from '../components/format';
import { Page } from '../components/page';
import { SettingsView } from '../components/settings-view';

export function CertificatesPage() {
  const [exporting, setExporting] = useState<Row | null>(null);
  return (
    <Page title="Certificates" help="The local certificate authority and its certificates, and certificates from ACME (Let's Encrypt and others).">
      <SettingsView title="Local CA" path="/ca" />
      <CollectionSection
        title="Issued certificates"
        itemName="certificate"
        path="/ca/certs"
        writePermission="settings:write"
        columns={[
          { key: 'common_name', label: 'Common name' },
          { key: 'cert_type', label: 'Type' },
          { key: 'sans', label: 'Names' },
          { key: 'not_after', label: 'Expires', render: (row) => formatTime(row.not_after as string) },
          { key: 'status', label: 'Status' },
        ]}
        createFields={[
          { name: 'cert_type', label: 'Type', kind: 'select', options: ['server', 'client'] },
          { name: 'common_name', label: 'Common name', kind: 'text' },
          { name: 'sans', label: 'Other names', kind: 'lines', hint: 'DNS names or addresses, one per line' },
          { name: 'validity_days', label: 'Valid for (days)', kind: 'number' },
        ]}
      />
      <SettingsView title="ACME account" path="/acme/account" />
      <CollectionSection
        title="ACME certificates"
        itemName="ACME certificate"
        path="/acme/certs"
        writePermission="settings:write"
        deletable
        editFields={[
          { name: 'sans', label: 'Other names', kind: 'lines', hint: 'DNS names, one per line' },
          { name: 'auto_renew', label: 'Renew automatically', kind: 'checkbox' },
          { name: 'renew_days_before_expiry', label: 'Renew days before expiry', kind: 'number' },
        ]}
        describe={(row) => `the certificate for ${String(row.common_name)}`}
        columns={[
          { key: 'common_name', label: 'Common name' },
          { key: 'sans', label: 'Other names' },
          { key: 'challenge_type', label: 'Challenge' },
          { key: 'status', label: 'Status' },
          { key: 'expires_at', label: 'Expires', render: (row) => formatTime(row.expires_at as string | null) },
          { key: 'days_until_expiry', label: 'Days left' },
        ]}
        rowActions={(row) => (
          <button type="button" class="secondary" onClick={() => setExporting(row)}>
            Export targets
          </button>
        )}
      />
      {exporting && <ExportTargets key={String(exporting.id)} certificate={exporting} />}
      <DnsProviders />
    </Page>
  );
}
