import { formatBytes, formatDuration } from '../components/format';
import { Page } from '../components/page';
import { SettingsView } from '../components/settings-view';
import { CollectionSection } from '../components/collection-section';
import { useSession } from '../auth/session-context';
import { useLoad } from '../components/use-load';
import { ErrorAlert } from '../components/error-alert';

/** Host facts in readable units. */
function SystemInfo() {
  const { api } = useSession();
  const info = useLoad(() => api.get<Record<string, unknown>>('/system/info'), 'system-info');
  const data = info.data ?? {};
  const rows: [string, string][] = [
    ['Host name', String(data.hostname ?? '—')],
    ['Operating system', `${String(data.os_version ?? '—')} (${String(data.arch ?? '')})`],
    ['CPU', `${String(data.cpu_model ?? '—')}, ${String(data.cpu_count ?? '?')} cores`],
    ['Memory', `${formatBytes(data.mem_used_bytes as number)} of ${formatBytes(data.mem_total_bytes as number)}`],
    ['Disk', `${formatBytes(data.disk_used_bytes as number)} of ${formatBytes(data.disk_total_bytes as number)}`],
    ['Uptime', formatDuration(data.uptime_secs as number)],
    ['Platform', `${String(data.platform ?? '—')}${data.simulated ? ' (simulated)' : ''}`],
  ];
  return (
    <section class="panel" aria-label="System information">
      <h2>System information</h2>
      <ErrorAlert message={info.error} />
      {!info.error && (
        <table class="key-value">
          <caption>System information</caption>
          <tbody>
            {rows.map(([label, value]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td>{info.data ? value : '…'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function SystemPage() {
  return (
    <Page title="System" help="The appliance itself: host, general settings, SSH and the software version.">
      <SystemInfo />
      <SettingsView title="About" path="/about" omit={['features']} />
      <SettingsView title="General" path="/system/general" />
      <SettingsView title="SSH" path="/system/ssh" />
      <SettingsView title="Updates" path="/updates/status" />
      <SettingsView title="Sign-in and lockout" path="/auth/settings" />
      <SettingsView title="Dashboard history" path="/settings/dashboard-history" />
      <SettingsView title="Remote syslog" path="/settings/syslog" />
      <CollectionSection
        title="Time sources"
        path="/time/sources"
        columns={[
          { key: 'address', label: 'Server' },
          { key: 'kind', label: 'Kind' },
          { key: 'iburst', label: 'iburst' },
          { key: 'enabled', label: 'Enabled' },
        ]}
      />
    </Page>
  );
}
