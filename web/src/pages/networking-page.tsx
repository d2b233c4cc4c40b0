import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';

export function NetworkingPage() {
  return (
    <Page title="Networking" help="Interfaces and their roles, VLANs and static routes.">
      <CollectionSection
        title="Interfaces"
        path="/interfaces"
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'status', label: 'Link' },
          { key: 'ipv4', label: 'IPv4' },
          { key: 'ipv6', label: 'IPv6' },
          { key: 'mac', label: 'MAC' },
          { key: 'role', label: 'Role' },
        ]}
      />
      <CollectionSection
        title="VLANs"
        itemName="VLAN"
        path="/vlans"
        writePermission="interfaces:write"
        deletable
        columns={[
          { key: 'vlan_id', label: 'VLAN id' },
          { key: 'parent', label: 'Parent' },
          { key: 'name', label: 'Name' },
          { key: 'ipv4', label: 'IPv4' },
          { key: 'description', label: 'Description' },
        ]}
        createFields={[
          { name: 'vlan_id', label: 'VLAN id', kind: 'number' },
          { name: 'parent', label: 'Parent interface', kind: 'text' },
          { name: 'ipv4', label: 'IPv4 address', kind: 'text', hint: 'CIDR, e.g. 10.20.0.1/24' },
          { name: 'description', label: 'Description', kind: 'text' },
        ]}
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
        createFields={[
          { name: 'destination', label: 'Destination', kind: 'text', hint: 'CIDR' },
          { name: 'gateway', label: 'Gateway', kind: 'text' },
          { name: 'interface', label: 'Interface', kind: 'text' },
          { name: 'metric', label: 'Metric', kind: 'number' },
          { name: 'description', label: 'Description', kind: 'text' },
        ]}
      />
    </Page>
  );
}
