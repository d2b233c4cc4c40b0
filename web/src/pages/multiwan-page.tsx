import { CollectionSection } from '../components/collection-section';
import { formatTime, formatValue } from '../components/format';
import { Page } from '../components/page';

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
        createFields={[
          { name: 'name', label: 'Name', kind: 'text' },
          { name: 'instance_id', label: 'Instance id', kind: 'text', hint: 'from the instances list' },
          { name: 'interface', label: 'Interface', kind: 'text' },
          { name: 'next_hop', label: 'Next hop', kind: 'text' },
          { name: 'monitor_kind', label: 'Monitor', kind: 'select', options: ['icmp', 'tcp', 'http', 'dns'] },
          { name: 'monitor_target', label: 'Monitor target', kind: 'text' },
        ]}
      />
      <CollectionSection
        title="Gateway groups"
        path="/multiwan/groups"
        writePermission="multiwan:write"
        deletable
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
        path="/multiwan/policies"
        writePermission="multiwan:write"
        deletable
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
