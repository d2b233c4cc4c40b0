import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import { SettingsView } from '../components/settings-view';

export function DnsPage() {
  return (
    <Page title="DNS" help="The resolver (Unbound), its host and domain overrides, access lists and blocklists.">
      <SettingsView title="Resolver status" path="/dns/resolver/status" />
      <CollectionSection
        title="Host overrides"
        itemName="host override"
        path="/dns/resolver/hosts"
        writePermission="dns:write"
        deletable
        columns={[
          { key: 'hostname', label: 'Host' },
          { key: 'domain', label: 'Domain' },
          { key: 'record_type', label: 'Type' },
          { key: 'value', label: 'Value' },
          { key: 'description', label: 'Description' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={[
          { name: 'hostname', label: 'Host', kind: 'text' },
          { name: 'domain', label: 'Domain', kind: 'text' },
          { name: 'record_type', label: 'Record type', kind: 'select', options: ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'PTR', 'SRV'] },
          { name: 'value', label: 'Value', kind: 'text' },
          { name: 'description', label: 'Description', kind: 'text' },
        ]}
      />
      <CollectionSection
        title="Domain overrides"
        itemName="domain override"
        path="/dns/resolver/domains"
        writePermission="dns:write"
        deletable
        columns={[
          { key: 'domain', label: 'Domain' },
          { key: 'server', label: 'Server' },
          { key: 'description', label: 'Description' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={[
          { name: 'domain', label: 'Domain', kind: 'text' },
          { name: 'server', label: 'Server', kind: 'text', hint: 'IP, IP:port or [IPv6]:port' },
          { name: 'description', label: 'Description', kind: 'text' },
        ]}
      />
      <CollectionSection
        title="Access lists"
        path="/dns/resolver/acls"
        writePermission="dns:write"
        deletable
        columns={[
          { key: 'network', label: 'Network' },
          { key: 'action', label: 'Action' },
          { key: 'description', label: 'Description' },
        ]}
      />
      <CollectionSection
        title="Blocklists"
        path="/dns/blocklists"
        writePermission="dns:write"
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'category', label: 'Category' },
          { key: 'format', label: 'Format' },
          { key: 'enabled', label: 'Enabled' },
          { key: 'rule_count', label: 'Entries' },
          { key: 'last_error', label: 'Last error' },
        ]}
      />
    </Page>
  );
}
