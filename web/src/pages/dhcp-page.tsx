import { CollectionSection } from '../components/collection-section';
import { formatTime } from '../components/format';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';
import { SettingsView } from '../components/settings-view';
import { ServiceStatus } from '../components/service-controls';
import { TextView } from '../components/text-view';

const SERVER_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Server enabled', kind: 'checkbox' },
  { name: 'interfaces', label: 'Interfaces', kind: 'lines', hint: 'one interface name per line' },
  { name: 'authoritative', label: 'Authoritative', kind: 'checkbox' },
  { name: 'default_lease_time', label: 'Lease time (seconds)', kind: 'number' },
  { name: 'max_lease_time', label: 'Longest lease (seconds)', kind: 'number' },
  { name: 'dns_servers', label: 'DNS servers', kind: 'lines', hint: 'one address per line' },
  { name: 'domain_name', label: 'Domain name', kind: 'text', sendEmpty: true },
  { name: 'domain_search', label: 'Search domains', kind: 'lines' },
  { name: 'ntp_servers', label: 'NTP servers', kind: 'lines' },
];

const SUBNET_FIELDS: readonly FieldSpec[] = [
  { name: 'network', label: 'Network', kind: 'text', hint: 'e.g. 192.168.1.0/24' },
  { name: 'pool_start', label: 'Pool start', kind: 'text' },
  { name: 'pool_end', label: 'Pool end', kind: 'text' },
  { name: 'gateway', label: 'Gateway', kind: 'text' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const RESERVATION_FIELDS: readonly FieldSpec[] = [
  { name: 'mac_address', label: 'MAC address', kind: 'text' },
  { name: 'ip_address', label: 'Address', kind: 'text' },
  { name: 'hostname', label: 'Host name', kind: 'text' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const DDNS_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Register leases in DNS', kind: 'checkbox' },
  { name: 'forward_zone', label: 'Forward zone', kind: 'text', sendEmpty: true, hint: 'e.g. lan.example.org' },
  { name: 'reverse_zone_v4', label: 'IPv4 reverse zone', kind: 'text', sendEmpty: true, hint: 'e.g. 1.168.192.in-addr.arpa' },
  { name: 'reverse_zone_v6', label: 'IPv6 reverse zone', kind: 'text', sendEmpty: true },
  { name: 'dns_server', label: 'DNS server', kind: 'text', sendEmpty: true, hint: 'address of the server taking the updates' },
  { name: 'tsig_key', label: 'TSIG key name', kind: 'text', sendEmpty: true },
  { name: 'tsig_algorithm', label: 'TSIG algorithm', kind: 'select', options: ['hmac-sha256', 'hmac-sha512', 'hmac-md5'] },
  { name: 'tsig_secret', label: 'TSIG secret', kind: 'password', setFlag: 'tsig_secret_set' },
  { name: 'ttl', label: 'TTL (seconds)', kind: 'number' },
];

const HA_FIELDS: readonly FieldSpec[] = [
  { name: 'mode', label: 'Mode', kind: 'select', options: ['standalone', 'active-active', 'hot-standby'] },
  { name: 'listen', label: 'Listen on', kind: 'text', hint: 'host:port this server takes HA traffic on' },
  { name: 'peer', label: 'Partner', kind: 'text', hint: 'host:port of the partner server' },
  { name: 'node_id', label: 'Node id', kind: 'number' },
  { name: 'scope_split', label: 'Share of the pool (0–1)', kind: 'number', hint: 'active-active only' },
  { name: 'mclt', label: 'Maximum client lead time (s)', kind: 'number' },
  { name: 'partner_down_delay', label: 'Partner-down delay (s)', kind: 'number' },
  { name: 'tls_cert', label: 'TLS certificate path', kind: 'text' },
  { name: 'tls_key', label: 'TLS key path', kind: 'text' },
  { name: 'tls_ca', label: 'TLS CA path', kind: 'text' },
];

export function DhcpPage() {
  return (
    <Page title="DHCP" help="The DHCPv4 server (Kea): subnets, reservations and the leases it handed out.">
      <ServiceStatus
        status={{ title: 'Server status', path: '/dhcp/status', omit: ['pool_stats', 'ha'] }}
        title="DHCP service control"
        writePermission="dhcp:write"
        actions={[
          { path: '/dhcp/restart', label: 'Restart DHCP' },
          { path: '/dhcp/start', label: 'Start DHCP' },
          { path: '/dhcp/stop', label: 'Stop DHCP' },
        ]}
      />
      <CollectionSection
        title="Pool usage"
        path="/dhcp/pool-stats"
        empty="No subnet pools."
        columns={[
          { key: 'subnet', label: 'Subnet' },
          { key: 'allocated', label: 'Allocated' },
          { key: 'available', label: 'Available' },
          { key: 'total', label: 'Total' },
          { key: 'utilization', label: 'Used (%)' },
        ]}
      />
      <SettingsSection title="Server settings" path="/dhcp/v4/config" writePermission="dhcp:write" fields={SERVER_FIELDS} />
      <CollectionSection
        title="Leases"
        path="/dhcp/v4/leases"
        refreshMs={10_000}
        columns={[
          { key: 'ip_address', label: 'Address' },
          { key: 'mac_address', label: 'MAC' },
          { key: 'hostname', label: 'Host name' },
          { key: 'state', label: 'State' },
          { key: 'subnet', label: 'Subnet' },
          { key: 'expires', label: 'Expires', render: (row) => formatTime(row.expires as string) },
        ]}
        empty="No leases."
      />
      <CollectionSection
        title="Subnets"
        itemName="subnet"
        path="/dhcp/v4/subnets"
        writePermission="dhcp:write"
        deletable
        describe={(row) => `the subnet ${String(row.network)}`}
        columns={[
          { key: 'network', label: 'Network' },
          { key: 'pool_start', label: 'Pool start' },
          { key: 'pool_end', label: 'Pool end' },
          { key: 'gateway', label: 'Gateway' },
          { key: 'enabled', label: 'Enabled' },
          { key: 'description', label: 'Description' },
        ]}
        createFields={SUBNET_FIELDS}
        editFields={[
          ...SUBNET_FIELDS,
          { name: 'dns_servers', label: 'DNS servers', kind: 'lines', hint: 'one address per line' },
          { name: 'domain_name', label: 'Domain name', kind: 'text' },
          { name: 'lease_time', label: 'Lease time (seconds)', kind: 'number' },
          { name: 'enabled', label: 'Enabled', kind: 'checkbox' },
        ]}
      />
      <CollectionSection
        title="Reservations"
        itemName="reservation"
        path="/dhcp/v4/reservations"
        writePermission="dhcp:write"
        deletable
        describe={(row) => `the reservation of ${String(row.ip_address)}`}
        columns={[
          { key: 'ip_address', label: 'Address' },
          { key: 'mac_address', label: 'MAC' },
          { key: 'hostname', label: 'Host name' },
          { key: 'description', label: 'Description' },
        ]}
        createFields={RESERVATION_FIELDS}
        editFields={RESERVATION_FIELDS}
      />
      <SettingsView title="Failover status" path="/dhcp/ha/status" />
      <SettingsSection title="Failover" path="/dhcp/ha/config" writePermission="dhcp:write" fields={HA_FIELDS} />
      <SettingsSection title="Dynamic DNS registration" path="/dhcp/ddns" writePermission="dhcp:write" fields={DDNS_FIELDS} />
      <TextView title="Server metrics (Prometheus)" path="/dhcp/metrics" />
    </Page>
  );
}
