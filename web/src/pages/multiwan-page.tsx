import { CollectionSection, type RowActionReport } from '../components/collection-section';
import { formatTime, formatValue } from '../components/format';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { ActionForm } from '../components/action-form';
import { SettingsView } from '../components/settings-view';
import { useSession } from '../auth/session-context';
import { ActionButton } from '../components/action-button';
import type { Row } from '../api/types';
import { MultiWanPreview, POLICY_FIELDS } from './multiwan-preview';

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

const LEAK_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'src_instance_id', label: 'From instance id', kind: 'text' },
  { name: 'dst_instance_id', label: 'To instance id', kind: 'text' },
  { name: 'prefix', label: 'Prefix', kind: 'text', hint: 'CIDR or any' },
  { name: 'protocol', label: 'Protocol', kind: 'select', options: ['any', 'tcp', 'udp', 'icmp', 'icmp6'] },
  { name: 'ports', label: 'Ports', kind: 'text', hint: 'e.g. 22 or 8000-8080' },
  { name: 'direction', label: 'Direction', kind: 'select', options: ['bidirectional', 'one_way'] },
];

/** A policy's live flows re-established on the route it now chooses (its states carry the label pbr:<id>). */
function MoveFlows({ row, report }: { row: Row; report: RowActionReport }) {
  const { api, can } = useSession();
  if (!can('multiwan:write')) return null;
  const move = async () => {
    const { killed } = await api.post<{ killed: number }>(`/multiwan/flows/${encodeURIComponent(`pbr:${String(row.id)}`)}/migrate`);
    report.done(`${String(row.name)}: ${killed} flow(s) moved to the current route.`);
  };
  return (
    <ActionButton run={move} onError={report.error}>
      Move its flows
    </ActionButton>
  );
}

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
        createFields={POLICY_FIELDS}
        rowActions={(row, _reload, report) => <MoveFlows row={row} report={report} />}
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
      <MultiWanPreview />
      <CollectionSection
        title="Live flows"
        path="/multiwan/flows"
        refreshMs={5000}
        empty="No live flows."
        columns={[
          { key: 'protocol', label: 'Protocol' },
          { key: 'src', label: 'Source' },
          { key: 'dst', label: 'Destination' },
          { key: 'iface', label: 'Interface' },
          { key: 'rtable', label: 'Routing table' },
          { key: 'bytes', label: 'Bytes' },
          { key: 'age_secs', label: 'Age (s)' },
        ]}
      />
      <CollectionSection
        title="Route leaks"
        itemName="route leak"
        path="/multiwan/leaks"
        writePermission="multiwan:write"
        deletable
        createFields={LEAK_FIELDS}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'prefix', label: 'Prefix' },
          { key: 'protocol', label: 'Protocol' },
          { key: 'ports', label: 'Ports' },
          { key: 'direction', label: 'Direction' },
          { key: 'enabled', label: 'Enabled' },
        ]}
      />
      <ActionForm title="Management escapes" permission="multiwan:write" path="/multiwan/leaks/seed-mgmt" fields={[]} submitLabel="Create the missing management escapes" help="Leaks that keep the management network reachable from every instance." />
      <SettingsView title="Routing tables" path="/multiwan/fibs" />
      <ActionForm
        title="More routing tables"
        permission="system:reboot"
        path="/multiwan/enable-fibs"
        fields={[
          { name: 'fibs', label: 'Routing tables', kind: 'number', initial: '16', hint: 'a power of two' },
          { name: 'reboot', label: 'Reboot if needed', kind: 'checkbox' },
        ]}
        submitLabel="Make available"
      />
    </Page>
  );
}
