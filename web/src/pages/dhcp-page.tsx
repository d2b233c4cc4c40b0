import { CollectionSection } from '../components/collection-section';
import { formatTime } from '../components/format';
import { Page } from '../components/page';
import { SettingsView } from '../components/settings-view';

export function DhcpPage() {
  return (
    <Page title="DHCP" help="The DHCPv4 server (Kea): subnets, reservations and the leases it handed out.">
      <SettingsView title="Server status" path="/dhcp/status" omit={['pool_stats', 'ha']} />
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
        createFields={[
          { name: 'network', label: 'Network', kind: 'text', hint: 'e.g. 192.168.1.0/24' },
          { name: 'pool_start', label: 'Pool start', kind: 'text' },
          { name: 'pool_end', label: 'Pool end', kind: 'text' },
          { name: 'gateway', label: 'Gateway', kind: 'text' },
          { name: 'description', label: 'Description', kind: 'text' },
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
        createFields={[
          { name: 'mac_address', label: 'MAC address', kind: 'text' },
          { name: 'ip_address', label: 'Address', kind: 'text' },
          { name: 'hostname', label: 'Host name', kind: 'text' },
          { name: 'description', label: 'Description', kind: 'text' },
        ]}
      />
    </Page>
  );
}
