import { useState } from 'preact/hooks';
import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';
import { ActionForm } from '../components/action-form';
import { NeedsPermission } from '../components/needs-permission';
import { formatBytes } from '../components/format';

const ENABLED: FieldSpec = { name: 'enabled', label: 'Enabled', kind: 'checkbox' };

const VLAN_FIELDS: readonly FieldSpec[] = [
  { name: 'vlan_id', label: 'VLAN id', kind: 'number' },
  { name: 'parent', label: 'Parent interface', kind: 'text' },
  { name: 'ipv4_mode', label: 'IPv4', kind: 'select', options: ['none', 'static', 'dhcp'] },
  { name: 'ipv4_address', label: 'IPv4 address', kind: 'text', hint: 'static only: CIDR, e.g. 10.20.0.1/24' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const DDNS_RECORD_FIELDS: readonly FieldSpec[] = [
  { name: 'hostname', label: 'Host name', kind: 'text' },
  { name: 'provider_id', label: 'DNS provider id', kind: 'text', hint: 'an ACME DNS provider (Certificates page) that can push A/AAAA records' },
  { name: 'record_type', label: 'Record', kind: 'select', options: ['a', 'aaaa', 'both'] },
  { name: 'source', label: 'Address from', kind: 'select', options: ['auto-public', 'interface', 'explicit'] },
  { name: 'interface', label: 'Interface', kind: 'text', hint: 'source interface only' },
  { name: 'explicit_ip', label: 'Address', kind: 'text', hint: 'source explicit only' },
  { name: 'ttl', label: 'TTL (seconds)', kind: 'number' },
];

const DDNS_CONFIG_FIELDS: readonly FieldSpec[] = [
  { name: 'poll_interval_secs', label: 'Check every (seconds)', kind: 'number' },
  { name: 'ip_echo_url_v4', label: 'IPv4 echo service', kind: 'text' },
  { name: 'ip_echo_url_v6', label: 'IPv6 echo service', kind: 'text' },
  { name: 'allow_private_echo', label: 'Allowed echo-service addresses', kind: 'lines', hint: 'private addresses the echo service may have, one per line' },
];

const INTERFACE_FIELDS: readonly FieldSpec[] = [
  { name: 'ipv4_mode', label: 'IPv4', kind: 'select', options: ['static', 'dhcp', 'none'] },
  { name: 'ipv4_address', label: 'IPv4 address', kind: 'text', hint: 'static only: CIDR, e.g. 192.168.1.1/24', read: (record) => (record.ipv4 ? `${String(record.ipv4)}/${String(record.ipv4_prefix)}` : '') },
  { name: 'gateway', label: 'Gateway', kind: 'text' },
  { name: 'ipv6_address', label: 'IPv6 address', kind: 'text', read: (record) => String(record.ipv6 ?? '') },
  { name: 'mtu', label: 'MTU', kind: 'number' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const ROUTE_FIELDS: readonly FieldSpec[] = [
  { name: 'destination', label: 'Destination', kind: 'text', hint: 'CIDR' },
  { name: 'gateway', label: 'Gateway', kind: 'text' },
  { name: 'interface', label: 'Interface', kind: 'text' },
  { name: 'metric', label: 'Metric', kind: 'number' },
  { name: 'description', label: 'Description', kind: 'text' },
];

export function NetworkingPage() {
  // a role set below shows in the interface list and the role list: both are read again
  const [roleChanges, setRoleChanges] = useState(0);
  return (
    <Page title="Networking" help="Interfaces and their roles, VLANs, static routes and dynamic DNS.">
      <CollectionSection
        title="Interfaces"
        key={`interfaces-${roleChanges}`}
        itemName="interface"
        path="/interfaces/detailed"
        itemPath={(row) => `/interfaces/config/${encodeURIComponent(String(row.name))}`}
        writePermission="interfaces:write"
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'status', label: 'Link' },
          { key: 'ipv4', label: 'IPv4', render: (row) => (row.ipv4 ? `${String(row.ipv4)}/${String(row.ipv4_prefix)} (${String(row.ipv4_mode)})` : '—') },
          { key: 'ipv6', label: 'IPv6' },
          { key: 'mac', label: 'MAC' },
          { key: 'mtu', label: 'MTU' },
          { key: 'role', label: 'Role' },
          { key: 'traffic', label: 'In / out', render: (row) => `${formatBytes(row.bytes_in as number)} / ${formatBytes(row.bytes_out as number)}` },
          { key: 'errors', label: 'Errors', render: (row) => `${String(row.errors_in)} / ${String(row.errors_out)}` },
          { key: 'description', label: 'Description' },
        ]}
        editFields={INTERFACE_FIELDS}
      />
      <CollectionSection
        key={`roles-${roleChanges}`}
        title="Interface roles"
        path="/interfaces/roles"
        pick={(data) => (data as [string, string][]).map(([name, role]) => ({ id: name, name, role }))}
        empty="No interface has a role yet."
        columns={[
          { key: 'name', label: 'Interface' },
          { key: 'role', label: 'Role' },
        ]}
      />
      <ActionForm
        title="Interface role"
        permission="interfaces:write"
        method="PUT"
        path={({ interface: name, ...body }) => ({ path: `/interfaces/${encodeURIComponent(String(name))}/role`, body })}
        fields={[
          { name: 'interface', label: 'Interface', kind: 'text' },
          { name: 'role', label: 'Role', kind: 'text', hint: 'wan, lan, dmz, …' },
        ]}
        submitLabel="Set role"
        answered={() => setRoleChanges((n) => n + 1)}
      />
      <CollectionSection
        title="Routing table"
        path="/routes/system"
        columns={[
          { key: 'destination', label: 'Destination' },
          { key: 'gateway', label: 'Gateway' },
          { key: 'interface', label: 'Interface' },
          { key: 'flags', label: 'Flags' },
          { key: 'metric', label: 'Metric' },
        ]}
      />
      <CollectionSection
        title="VLANs"
        itemName="VLAN"
        path="/vlans"
        writePermission="interfaces:write"
        deletable
        describe={(row) => `VLAN ${String(row.vlan_id)} on ${String(row.parent)}`}
        columns={[
          { key: 'vlan_id', label: 'VLAN id' },
          { key: 'parent', label: 'Parent' },
          { key: 'ipv4_mode', label: 'IPv4' },
          { key: 'ipv4_address', label: 'IPv4 address' },
          { key: 'mtu', label: 'MTU' },
          { key: 'enabled', label: 'Enabled' },
          { key: 'description', label: 'Description' },
        ]}
        createFields={VLAN_FIELDS}
        editFields={[...VLAN_FIELDS, { name: 'mtu', label: 'MTU', kind: 'number' }, ENABLED]}
      />
      <CollectionSection
        title="Static routes"
        itemName="route"
        path="/routes"
        writePermission="interfaces:write"
        deletable
        describe={(row) => `the route to ${String(row.destination)}`}
        columns={[
          { key: 'destination', label: 'Destination' },
          { key: 'gateway', label: 'Gateway' },
          { key: 'interface', label: 'Interface' },
          { key: 'metric', label: 'Metric' },
          { key: 'description', label: 'Description' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={ROUTE_FIELDS}
        editFields={[...ROUTE_FIELDS, ENABLED]}
      />
      <NeedsPermission permission="settings:read" what="Dynamic DNS">
        <CollectionSection
          title="Dynamic DNS"
          itemName="dynamic DNS record"
          path="/ddns/records"
          writePermission="settings:write"
          deletable
          // the API reads dynamic DNS records as a list only
          readEach={false}
          describe={(row) => `the dynamic DNS record ${String(row.hostname)}`}
          columns={[
            { key: 'hostname', label: 'Host name' },
            { key: 'provider_name', label: 'Provider' },
            { key: 'record_type', label: 'Record' },
            { key: 'source', label: 'Address from' },
            { key: 'last_ip', label: 'Last address' },
            { key: 'last_status', label: 'Last update' },
            { key: 'last_error', label: 'Error' },
            { key: 'enabled', label: 'Enabled' },
          ]}
          createFields={DDNS_RECORD_FIELDS}
          editFields={[...DDNS_RECORD_FIELDS, ENABLED]}
        />
        <SettingsSection title="Dynamic DNS checks" path="/ddns/config" writePermission="settings:write" fields={DDNS_CONFIG_FIELDS} />
      </NeedsPermission>
    </Page>
  );
}
