import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { ServiceStatus } from '../components/service-controls';
import { SettingsSection } from '../components/settings-form';

const CONFIG_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Time service enabled', kind: 'checkbox' },
  { name: 'ntp_enabled', label: 'Serve NTP to the network', kind: 'checkbox' },
  { name: 'ntp_listen', label: 'NTP listen address', kind: 'text', hint: 'address:port, e.g. 0.0.0.0:123' },
  { name: 'ntp_interfaces', label: 'NTP interfaces', kind: 'lines', hint: 'one interface name per line; none: all' },
  { name: 'nts_enabled', label: 'Network Time Security (NTS)', kind: 'checkbox' },
  { name: 'nts_certificate', label: 'NTS certificate path', kind: 'text' },
  { name: 'nts_private_key', label: 'NTS private key path', kind: 'text' },
  { name: 'clock_discipline', label: 'Discipline the system clock', kind: 'checkbox' },
  { name: 'clock_step_threshold_ms', label: 'Step threshold (ms)', kind: 'number' },
  { name: 'log_level', label: 'Log level', kind: 'select', options: ['trace', 'debug', 'info', 'warn', 'error'] },
];

const SOURCE_FIELDS: readonly FieldSpec[] = [
  { name: 'address', label: 'Server', kind: 'text', required: true, hint: 'NTP server name or address' },
  { name: 'nts', label: 'Use NTS', kind: 'checkbox' },
  { name: 'min_poll', label: 'Minimum poll (log2 s)', kind: 'number' },
  { name: 'max_poll', label: 'Maximum poll (log2 s)', kind: 'number' },
];

export function TimePage() {
  return (
    <Page title="Time service" help="The appliance's clock (chrony): its upstream servers, and NTP served to the network.">
      <ServiceStatus
        status={{ title: 'Time status', path: '/time/status', omit: ['sources', 'config_sha256'] }}
        title="Time service control"
        writePermission="settings:write"
        actions={[
          { path: '/time/apply', label: 'Apply configuration' },
          { path: '/time/restart', label: 'Restart' },
          { path: '/time/start', label: 'Start' },
          { path: '/time/stop', label: 'Stop' },
        ]}
      />
      <SettingsSection title="Time settings" path="/time/config" writePermission="settings:write" fields={CONFIG_FIELDS} />
      <CollectionSection
        title="Time sources"
        itemName="time source"
        path="/time/sources"
        writePermission="settings:write"
        deletable
        describe={(row) => `the time source ${String(row.address)}`}
        columns={[
          { key: 'address', label: 'Server' },
          { key: 'nts', label: 'NTS' },
          { key: 'min_poll', label: 'Min poll' },
          { key: 'max_poll', label: 'Max poll' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={SOURCE_FIELDS}
        editFields={[...SOURCE_FIELDS, { name: 'enabled', label: 'Enabled', kind: 'checkbox' }]}
      />
    </Page>
  );
}
