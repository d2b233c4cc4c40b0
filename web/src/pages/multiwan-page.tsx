import { CollectionSection } from '../components/collection-section';
import { formatTime, formatValue } from '../components/format';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';

const GATEWAY_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'instance_id', label: 'Instance id', kind: 'text', hint: 'from the instances list' },
  { name: 'interface', label: 'Interface', kind: 'text' },
  { name: 'next_hop', label: 'Next hop', kind: 'text' },
  { name: 'monitor_kind', label: 'Monitor', kind: 'select', options: ['icmp', 'tcp', 'http', 'dns'] },
  { name: 'monitor_target', label: 'Monitor target', kind: 'text' },
];

const GROUP_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'policy', label: 'Policy', kind: 'select', options: ['failover', 'weighted_lb', 'adaptive', 'load_balance'] },
  { name: 'preempt', label: 'Return to a recovered gateway', kind: 'checkbox', initial: true },
  { name: 'kill_states_on_failover', label: 'Kill states on failover', kind: 'checkbox', initial: true },
];

export function MultiWanPage() {
  return (
    <Page title="Multi-WAN" help="Gateways with their health as the monitors see it (refreshed every 5 seconds), failover groups and policies.">
      <CollectionSection
        title="Gateways"
        itemName="gateway"
        path="/multiwan/gateways"
        writePermission="multiwan:write"
        deletable
        refreshMs={5000}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'interface', label: 'Interface' },
          { key: 'next_hop', label: 'Next hop' },
          { key: 'monitor_kind', label: 'Monitor' },
          { key: 'state', label: 'State', render: (row) => <span class={`state ${String(row.state)}`}>{formatValue(row.state)}</span> },
          { key: 'last_rtt_ms', label: 'RTT (ms)' },
          { key: 'last_loss_pct', label: 'Loss (%)' },
          { key: 'last_change_at', label: 'Last change', render: (row) => formatTime(row.last_change_at as string | null) },
        ]}
        createFields={GATEWAY_FIELDS}
        editFields={[
          ...GATEWAY_FIELDS,
          { name: 'weight', label: 'Weight', kind: 'number' },
          { name: 'enabled', label: 'Enabled', kind: 'checkbox' },
        ]}
      />
      <CollectionSection
        title="Gateway groups"
        itemName="gateway group"
        path="/multiwan/groups"
        writePermission="multiwan:write"
        deletable
        createFields={GROUP_FIELDS}
        editFields={GROUP_FIELDS}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'policy', label: 'Policy' },
          { key: 'kill_states_on_failover', label: 'Kill states on failover' },
        ]}
      />
      <CollectionSection
        title="Instances"
        path="/multiwan/instances"
        writePermission="multiwan:write"
        columns={[
          { key: 'id', label: 'Id' },
          { key: 'name', label: 'Name' },
          { key: 'fib_number', label: 'Routing table' },
          { key: 'status', label: 'Status' },
        ]}
      />
      <CollectionSection
        title="Policies"
        itemName="policy"
        path="/multiwan/policies"
        writePermission="multiwan:write"
        deletable
        reorder={{ path: '/multiwan/policies/reorder', field: 'policy_ids' }}
        editFields={[
          { name: 'name', label: 'Name', kind: 'text' },
          { name: 'status', label: 'Status', kind: 'select', options: ['active', 'disabled'] },
          { name: 'description', label: 'Description', kind: 'text' },
        ]}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'priority', label: 'Priority' },
          { key: 'action_kind', label: 'Action' },
          { key: 'enabled', label: 'Enabled' },
        ]}
      />
    </Page>
  );
}
