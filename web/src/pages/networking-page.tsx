import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';

const ENABLED: FieldSpec = { name: 'enabled', label: 'Enabled', kind: 'checkbox' };

const VLAN_FIELDS: readonly FieldSpec[] = [
  { name: 'vlan_id', label: 'VLAN id', kind: 'number' },
  { name: 'parent', label: 'Parent interface', kind: 'text' },
  { name: 'ipv4_mode', label: 'IPv4', kind: 'select', options: ['none', 'static', 'dhcp'] },
  { name: 'ipv4_address', label: 'IPv4 address', kind: 'text', hint: 'static only: CIDR, e.g. 10.20.0.1/24' },
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
    </Page>
  );
}
