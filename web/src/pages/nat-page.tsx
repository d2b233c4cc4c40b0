import { CollectionSection } from '../components/collection-section';
import { formatValue, portText } from '../components/format';
import { Page } from '../components/page';
import { TextView } from '../components/text-view';
import type { FieldSpec } from '../components/record-form';
import type { Row } from '../api/types';

const at = (address: unknown, port: unknown) => `${formatValue(address)}${port ? `:${formatValue(port)}` : ''}`;
const redirectOf = (row: Row) => (row.redirect ?? {}) as { address?: string; port?: { start: number; end: number } | null };

// Ports as text ("443" or "8000-8080"), as the API takes them, so a range is one input.
const NAT_FIELDS: readonly FieldSpec[] = [
  { name: 'nat_type', label: 'Type', kind: 'select', options: ['dnat', 'snat', 'masquerade', 'binat'] },
  { name: 'interface', label: 'Interface', kind: 'text', required: true },
  { name: 'protocol', label: 'Protocol', kind: 'select', options: ['tcp', 'udp', 'tcp/udp', 'icmp', 'any'] },
  { name: 'src_addr', label: 'Source address', kind: 'text', hint: 'any, an address, a CIDR or <alias>' },
  { name: 'dst_addr', label: 'Destination address', kind: 'text', hint: 'any, an address, a CIDR or <alias>' },
  { name: 'dst_port', label: 'Destination port', kind: 'text', hint: 'e.g. 443 or 8000-8080', read: (row) => portText(row.dst_port) },
  { name: 'redirect_addr', label: 'Translate to address', kind: 'text', read: (row) => redirectOf(row).address ?? '' },
  { name: 'redirect_port_start', label: 'Translate to port', kind: 'number', read: (row) => portText(redirectOf(row).port?.start) },
  { name: 'label', label: 'Label', kind: 'text' },
];

export function NatPage() {
  return (
    <Page title="NAT" help="Source NAT, port forwards (dnat), masquerading and 1:1 NAT, evaluated top to bottom. Changes take effect when applied.">
      <CollectionSection
        title="NAT rules"
        itemName="NAT rule"
        path="/nat"
        writePermission="nat:write"
        deletable
        reorder={{ path: '/nat/reorder', field: 'rule_ids' }}
        describe={(row) => `the ${String(row.nat_type)} rule on ${String(row.interface)}`}
        columns={[
          { key: 'nat_type', label: 'Type' },
          { key: 'interface', label: 'Interface' },
          { key: 'protocol', label: 'Protocol' },
          { key: 'source', label: 'Source', render: (row: Row) => at(row.src_addr, row.src_port) },
          { key: 'destination', label: 'Destination', render: (row: Row) => at(row.dst_addr, row.dst_port) },
          { key: 'redirect', label: 'Translated to', render: (row: Row) => at(redirectOf(row).address, redirectOf(row).port) },
          { key: 'label', label: 'Label' },
          { key: 'status', label: 'Status' },
        ]}
        createFields={NAT_FIELDS}
        editFields={[...NAT_FIELDS, { name: 'status', label: 'Status', kind: 'select', options: ['active', 'disabled'] }]}
      />
      <TextView title="NAT rules as loaded" path="/nat/pf-output" text={(lines) => (lines as string[]).join('\n')} />
    </Page>
  );
}
