import { CollectionSection } from '../components/collection-section';
import { formatValue } from '../components/format';
import { Page } from '../components/page';
import type { Row } from '../api/types';

const at = (address: unknown, port: unknown) => `${formatValue(address)}${port ? `:${formatValue(port)}` : ''}`;

export function NatPage() {
  return (
    <Page title="NAT" help="Source NAT, port forwards (dnat), masquerading and 1:1 NAT. Changes take effect when applied.">
      <CollectionSection
        title="NAT rules"
        itemName="NAT rule"
        path="/nat"
        writePermission="nat:write"
        deletable
        describe={(row) => `the ${String(row.nat_type)} rule on ${String(row.interface)}`}
        columns={[
          { key: 'nat_type', label: 'Type' },
          { key: 'interface', label: 'Interface' },
          { key: 'protocol', label: 'Protocol' },
          { key: 'source', label: 'Source', render: (row: Row) => at(row.src_addr, row.src_port) },
          { key: 'destination', label: 'Destination', render: (row: Row) => at(row.dst_addr, row.dst_port) },
          { key: 'redirect', label: 'Translated to', render: (row: Row) => { const r = row.redirect as { address?: string; port?: unknown } | undefined; return at(r?.address, r?.port); } },
          { key: 'label', label: 'Label' },
          { key: 'status', label: 'Status' },
        ]}
        createFields={[
          { name: 'nat_type', label: 'Type', kind: 'select', options: ['dnat', 'snat', 'masquerade', 'binat'] },
          { name: 'interface', label: 'Interface', kind: 'text', required: true },
          { name: 'protocol', label: 'Protocol', kind: 'select', options: ['tcp', 'udp', 'tcp/udp', 'icmp', 'any'] },
          { name: 'src_addr', label: 'Source address', kind: 'text' },
          { name: 'dst_addr', label: 'Destination address', kind: 'text' },
          { name: 'dst_port_start', label: 'Destination port', kind: 'number' },
          { name: 'dst_port_end', label: 'Destination port to', kind: 'number' },
          { name: 'redirect_addr', label: 'Translate to address', kind: 'text' },
          { name: 'redirect_port_start', label: 'Translate to port', kind: 'number' },
          { name: 'label', label: 'Label', kind: 'text' },
        ]}
      />
    </Page>
  );
}
