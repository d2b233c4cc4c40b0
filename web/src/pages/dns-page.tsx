import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';
import { SettingsView } from '../components/settings-view';
import { DnsStats } from './dns-stats';

const ENABLED: FieldSpec = { name: 'enabled', label: 'Enabled', kind: 'checkbox' };

const HOST_FIELDS: readonly FieldSpec[] = [
  { name: 'hostname', label: 'Host', kind: 'text' },
  { name: 'domain', label: 'Domain', kind: 'text' },
  { name: 'record_type', label: 'Record type', kind: 'select', options: ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'PTR'] },
  { name: 'value', label: 'Value', kind: 'text' },
  { name: 'mx_priority', label: 'MX priority', kind: 'number', hint: 'MX records only' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const DOMAIN_FIELDS: readonly FieldSpec[] = [
  { name: 'domain', label: 'Domain', kind: 'text' },
  { name: 'server', label: 'Server', kind: 'text', hint: 'IP, IP:port or [IPv6]:port' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const ACL_FIELDS: readonly FieldSpec[] = [
  { name: 'network', label: 'Network', kind: 'text', hint: 'CIDR, e.g. 192.168.1.0/24' },
  { name: 'action', label: 'Action', kind: 'select', options: ['allow', 'deny', 'refuse', 'allow_snoop'] },
  { name: 'description', label: 'Description', kind: 'text' },
];

const RESOLVER_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Resolver enabled', kind: 'checkbox' },
  { name: 'listen_interfaces', label: 'Listen on', kind: 'lines', hint: 'addresses, one per line' },
  { name: 'port', label: 'Port', kind: 'number' },
  { name: 'dnssec', label: 'Validate DNSSEC', kind: 'checkbox' },
  { name: 'forwarding_enabled', label: 'Forward queries', kind: 'checkbox' },
  { name: 'forwarding_servers', label: 'Forwarding servers', kind: 'lines', hint: 'one address per line' },
  { name: 'register_dhcp', label: 'Register DHCP leases', kind: 'checkbox' },
  { name: 'dhcp_domain', label: 'Domain of DHCP leases', kind: 'text' },
  { name: 'rebind_protection', label: 'Rebind protection', kind: 'checkbox' },
  { name: 'log_queries', label: 'Log queries', kind: 'checkbox' },
];

const PATTERN_FIELDS: readonly FieldSpec[] = [
  { name: 'pattern', label: 'Domain', kind: 'text', hint: 'e.g. ads.example.org or *.example.org' },
  { name: 'note', label: 'Note', kind: 'text' },
];

/** A list of domain names (blocked by hand, or allowed despite the blocklists): add and delete. */
function NameList({ title, itemName, path, empty }: { title: string; itemName: string; path: string; empty: string }) {
  return (
    <CollectionSection
      title={title}
      itemName={itemName}
      path={path}
      writePermission="dns:write"
      deletable
      describe={(row) => `the ${itemName} ${String(row.pattern)}`}
      columns={[
        { key: 'pattern', label: 'Domain' },
        { key: 'note', label: 'Note' },
      ]}
      createFields={PATTERN_FIELDS}
      empty={empty}
    />
  );
}

export function DnsPage() {
  return (
    <Page title="DNS" help="The resolver (Unbound), its host and domain overrides, access lists and blocklists.">
      <SettingsView title="Resolver status" path="/dns/resolver/status" />
      <DnsStats />
      <SettingsSection title="Resolver settings" path="/dns/resolver/config" writePermission="dns:write" fields={RESOLVER_FIELDS} />
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
        createFields={HOST_FIELDS}
        editFields={[...HOST_FIELDS, ENABLED]}
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
        createFields={DOMAIN_FIELDS}
        editFields={[...DOMAIN_FIELDS, ENABLED]}
      />
      <CollectionSection
        title="Access lists"
        itemName="access rule"
        path="/dns/resolver/acls"
        writePermission="dns:write"
        deletable
        describe={(row) => `the access rule for ${String(row.network)}`}
        columns={[
          { key: 'network', label: 'Network' },
          { key: 'action', label: 'Action' },
          { key: 'description', label: 'Description' },
        ]}
        createFields={ACL_FIELDS}
        editFields={ACL_FIELDS}
      />
      <CollectionSection
        title="Blocklists"
        itemName="blocklist"
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
        editFields={[
          ENABLED,
          { name: 'url', label: 'URL', kind: 'text' },
          { name: 'action', label: 'Answer for blocked names', kind: 'select', options: ['nxdomain', 'nodata', 'drop', 'redirect'] },
          { name: 'redirect_ip', label: 'Redirect to', kind: 'text', hint: 'with the redirect answer' },
        ]}
      />
      <NameList title="Custom blocks" itemName="custom block" path="/dns/customblocks" empty="No names blocked by hand." />
      <NameList title="Allowed names" itemName="allowed name" path="/dns/whitelist" empty="No exceptions to the blocklists." />
      <SettingsSection
        title="The appliance's own nameservers"
        path="/dns"
        writePermission="dns:write"
        fields={[{ name: 'servers', label: 'Nameservers', kind: 'lines', hint: 'addresses the appliance itself asks, one per line' }]}
      />
    </Page>
  );
}
