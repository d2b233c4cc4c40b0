import type { ComponentChildren } from 'preact';
import { formatBytes, formatDuration } from '../components/format';
import { NotFoundPage } from './not-found-page';
import { Page } from '../components/page';
import { SettingsView } from '../components/settings-view';
import { useSession } from '../auth/session-context';
import { useLoad } from '../components/use-load';
import { ErrorAlert } from '../components/error-alert';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';
import { ConfirmedAction } from '../components/confirmed-action';

const AI_PROVIDERS = ['openai', 'claude', 'lm_studio', 'ollama'] as const;

/** The time zone is chosen from the ones the appliance knows (`GET /system/timezones`). */
function generalFields(timezones: readonly string[] | undefined): readonly FieldSpec[] {
  return [
    { name: 'hostname', label: 'Host name', kind: 'text', sendEmpty: true },
    { name: 'domain', label: 'Domain', kind: 'text', sendEmpty: true },
    timezones
      ? { name: 'timezone', label: 'Time zone', kind: 'select', options: timezones }
      : { name: 'timezone', label: 'Time zone', kind: 'text', hint: 'IANA name, e.g. Europe/Berlin' },
  ];
}

const METRICS_STORE_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Keep metrics in Redis', kind: 'checkbox' },
  { name: 'url', label: 'Redis URL', kind: 'text', hint: 'redis://host:port' },
  { name: 'password', label: 'Redis password', kind: 'password', setFlag: 'has_password' },
  { name: 'retention_minutes', label: 'Keep for (minutes)', kind: 'number' },
];

const PF_TUNING_FIELDS: readonly FieldSpec[] = [
  { name: 'max_states', label: 'State table size', kind: 'number', read: (record) => String(record.configured_max_states ?? '') },
  { name: 'tcp_established', label: 'Established TCP timeout (s)', kind: 'number', read: (record) => timeoutOf(record, 'tcp_established') },
  { name: 'udp', label: 'UDP timeout (s)', kind: 'number', read: (record) => timeoutOf(record, 'udp') },
  { name: 'udp_stream', label: 'UDP stream timeout (s)', kind: 'number', read: (record) => timeoutOf(record, 'udp_stream') },
  { name: 'icmp', label: 'ICMP timeout (s)', kind: 'number', read: (record) => timeoutOf(record, 'icmp') },
];

const SSH_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'SSH enabled', kind: 'checkbox' },
  { name: 'port', label: 'Port', kind: 'number' },
  { name: 'password_auth', label: 'Allow passwords', kind: 'checkbox' },
  { name: 'permit_root_login', label: 'Allow root to sign in', kind: 'checkbox' },
];

const SIGN_IN_FIELDS: readonly FieldSpec[] = [
  { name: 'access_token_expiry_mins', label: 'Access token lifetime (minutes)', kind: 'number' },
  { name: 'refresh_token_expiry_days', label: 'Session lifetime (days)', kind: 'number' },
  { name: 'max_login_attempts', label: 'Failed sign-ins before lockout', kind: 'number' },
  { name: 'lockout_duration_secs', label: 'Lockout (seconds)', kind: 'number' },
  { name: 'password_min_length', label: 'Shortest password', kind: 'number' },
  { name: 'require_totp', label: 'Require two-factor authentication', kind: 'checkbox' },
  { name: 'require_totp_for_oauth', label: 'Require two-factor after single sign-on', kind: 'checkbox' },
  { name: 'auto_create_oauth_users', label: 'Create accounts on first single sign-on', kind: 'checkbox' },
];

const TLS_FIELDS: readonly FieldSpec[] = [
  { name: 'min_version', label: 'Oldest TLS version', kind: 'select', options: ['tls12', 'tls13'] },
  { name: 'block_expired', label: 'Refuse expired certificates', kind: 'checkbox' },
  { name: 'block_weak_keys', label: 'Refuse weak keys', kind: 'checkbox' },
  { name: 'cert_path', label: 'Certificate file', kind: 'text', sendEmpty: true },
  { name: 'key_path', label: 'Key file', kind: 'text', sendEmpty: true },
  { name: 'acme_cert_id', label: 'ACME certificate id (local-tls-store)', kind: 'text', sendEmpty: true },
  { name: 'http_redirect', label: 'Redirect plain HTTP to HTTPS', kind: 'checkbox' },
  { name: 'hsts_max_age', label: 'HSTS max-age (seconds)', kind: 'number' },
];

const DASHBOARD_HISTORY_FIELDS: readonly FieldSpec[] = [
  { name: 'mode', label: 'Limit by', kind: 'select', options: ['duration', 'ram'] },
  { name: 'history_seconds', label: 'Seconds of 1 s samples', kind: 'number' },
  { name: 'ram_limit_mb', label: 'Memory limit (MB)', kind: 'number' },
  { name: 'minute_retention_hours', label: 'Keep minutes for (hours)', kind: 'number' },
  { name: 'hour_retention_days', label: 'Keep hours for (days)', kind: 'number' },
  { name: 'day_retention_days', label: 'Keep days for (days)', kind: 'number' },
];

const SYSLOG_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Send to a syslog server', kind: 'checkbox' },
  { name: 'host', label: 'Server', kind: 'text', sendEmpty: true },
  { name: 'port', label: 'Port', kind: 'number' },
  { name: 'transport', label: 'Transport', kind: 'select', options: ['udp', 'tcp'] },
  { name: 'format', label: 'Format', kind: 'select', options: ['rfc3164', 'rfc5424'] },
  { name: 'facility', label: 'Facility', kind: 'number' },
  { name: 'hostname_override', label: 'Host name sent', kind: 'text', sendEmpty: true, hint: 'empty: the appliance host name' },
  { name: 'allowed_addresses', label: 'Allowed server addresses', kind: 'lines', hint: 'private or local addresses the server may have, one per line' },
  { name: 'pf_enabled', label: 'Packet filter log', kind: 'checkbox' },
  { name: 'ids_enabled', label: 'IDS alerts', kind: 'checkbox' },
  { name: 'app_enabled', label: 'Appliance log', kind: 'checkbox' },
  { name: 'app_min_level', label: 'Appliance log level', kind: 'select', options: ['error', 'warn', 'info', 'debug'] },
  { name: 'disable_local', label: 'Stop logging locally', kind: 'checkbox' },
];

const SMTP_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Send email notifications', kind: 'checkbox' },
  { name: 'host', label: 'SMTP server', kind: 'text', sendEmpty: true },
  { name: 'port', label: 'Port', kind: 'number' },
  { name: 'tls', label: 'TLS', kind: 'select', options: ['starttls', 'implicit', 'none'] },
  { name: 'username', label: 'User name', kind: 'text' },
  { name: 'password', label: 'SMTP password', kind: 'password', setFlag: 'has_password' },
  { name: 'from_address', label: 'From', kind: 'text' },
  { name: 'recipients', label: 'Recipients', kind: 'text', sendEmpty: true, hint: 'comma-separated addresses' },
  { name: 'enabled_events', label: 'Events', kind: 'lines', hint: 'one event name per line' },
  { name: 'allowed_addresses', label: 'Allowed server addresses', kind: 'lines', hint: 'private or local addresses the server may have, one per line' },
];

const UPDATE_SCHEDULE_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Scheduled updates', kind: 'checkbox' },
  { name: 'day_of_week', label: 'Day', kind: 'select', options: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] },
  { name: 'time', label: 'Time', kind: 'text', hint: 'HH:MM' },
  { name: 'auto_check', label: 'Check for updates', kind: 'checkbox' },
  { name: 'auto_install', label: 'Install updates', kind: 'checkbox' },
  { name: 'auto_reboot', label: 'Restart when needed', kind: 'checkbox' },
  { name: 'auto_update_appliance', label: 'Update the appliance software', kind: 'checkbox' },
];

const BANNER_FIELDS: readonly FieldSpec[] = [
  { name: 'login_banner', label: 'Sign-in banner', kind: 'paragraph', sendEmpty: true, hint: 'shown before SSH and console sign-in' },
  { name: 'motd', label: 'Message of the day', kind: 'paragraph', sendEmpty: true, hint: 'shown after sign-in' },
];

const CONSOLE_FIELDS: readonly FieldSpec[] = [
  { name: 'kind', label: 'Console on', kind: 'select', options: ['video', 'serial', 'dual'] },
  { name: 'baud', label: 'Serial speed (baud)', kind: 'number', hint: '9600, 19200, 38400, 57600 or 115200' },
];

const AI_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'AI threat analysis', kind: 'checkbox' },
  { name: 'active_provider', label: 'Provider in use', kind: 'select', options: ['', ...AI_PROVIDERS] },
  { name: 'outbound_allow_list', label: 'Allowed provider addresses', kind: 'lines', hint: 'private or local addresses a provider may have (a LAN runtime), one per line' },
];

/** A configured state timeout as its field shows it (empty: the kernel's default). */
function timeoutOf(record: Record<string, unknown>, name: string): string {
  const value = (record.configured_timeouts as Record<string, unknown> | undefined)?.[name];
  return value === null || value === undefined ? '' : String(value);
}

/** Reboot and shutdown, each behind a confirmation step (system:reboot). */
function Power() {
  const { can } = useSession();
  if (!can('system:reboot')) return null;
  return (
    <section class="panel" aria-label="Power">
      <header class="panel-head">
        <h2>Power</h2>
      </header>
      <div class="actions">
        <ConfirmedAction label="Reboot" path="/updates/reboot" permission="system:reboot" consequence="The appliance restarts in 10 seconds: traffic through it stops and every session ends until it is back." />
        <ConfirmedAction label="Shut down" path="/updates/shutdown" permission="system:reboot" consequence="The appliance powers off in 10 seconds: traffic through it stops until someone switches it on again." />
      </div>
    </section>
  );
}

function GeneralSettings() {
  const { api } = useSession();
  const timezones = useLoad(() => api.get<string[]>('/system/timezones'), 'timezones');
  return <SettingsSection key={timezones.data ? 'zones' : 'text'} title="General" path="/system/general" writePermission="settings:write" fields={generalFields(timezones.data)} />;
}

type ProviderRow = { provider?: string; enabled?: boolean; api_key_set?: boolean; endpoint?: string; model?: string };

/** One provider's entry of the AI settings: the section answers every provider in one list. */
function providerEntry(record: Record<string, unknown>, provider: string): ProviderRow {
  const providers = Array.isArray(record.providers) ? (record.providers as ProviderRow[]) : [];
  return providers.find((entry) => entry.provider === provider) ?? {};
}

function aiProviderFields(provider: string): readonly FieldSpec[] {
  return [
    { name: 'provider_enabled', label: 'Enabled', kind: 'checkbox', read: (record) => providerEntry(record, provider).enabled === true },
    { name: 'endpoint', label: 'Endpoint', kind: 'text', sendEmpty: true, read: (record) => providerEntry(record, provider).endpoint ?? '' },
    { name: 'model', label: 'Model', kind: 'text', sendEmpty: true, read: (record) => providerEntry(record, provider).model ?? '' },
    {
      name: 'api_key', label: 'API key', kind: 'password',
      hint: 'write-only: never shown; leave empty to keep the stored key, type one to replace it',
    },
  ];
}

/** The AI section, and for those who may change it one form per provider (each save names its provider). */
function AiSettings() {
  const { can } = useSession();
  if (!can('settings:write')) return <SettingsSection title="AI threat analysis" path="/settings/ai" writePermission="settings:write" fields={AI_FIELDS} />;
  return (
    <>
      <SettingsSection title="AI threat analysis" path="/settings/ai" writePermission="settings:write" fields={AI_FIELDS} omit={['providers']} />
      {AI_PROVIDERS.map((provider) => (
        <SettingsSection
          key={provider}
          title={`AI provider ${provider}`}
          path="/settings/ai"
          writePermission="settings:write"
          fields={aiProviderFields(provider)}
          scope={{ provider }}
          omit={['enabled', 'active_provider', 'providers', 'outbound_allow_list']}
        />
      ))}
    </>
  );
}

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

/** The System page's sections, each at its own address (`/system/access`); the first is `/system` itself. */
const SECTIONS: readonly { slug: string; label: string; help: string; body: () => ComponentChildren }[] = [
  {
    slug: '',
    label: 'Overview',
    help: 'The appliance itself: host facts, the software version, power, and the update schedule.',
    body: () => (
      <>
        <SystemInfo />
        <SettingsView title="About" path="/about" omit={['features']} />
        <Power />
        <SettingsView title="Updates" path="/updates/status" />
        <SettingsSection title="Update schedule" path="/updates/schedule" writePermission="updates:install" fields={UPDATE_SCHEDULE_FIELDS} />
      </>
    ),
  },
  {
    slug: 'access',
    label: 'Host and access',
    help: 'Host name and time zone, SSH, signing in to the console, and its HTTPS certificate.',
    body: () => (
      <>
        <GeneralSettings />
        <SettingsSection title="SSH" path="/system/ssh" writePermission="settings:write" fields={SSH_FIELDS} />
        <SettingsSection title="Sign-in and lockout" path="/auth/settings" writePermission="settings:write" fields={SIGN_IN_FIELDS} />
        <SettingsSection title="HTTPS" path="/settings/tls" writePermission="settings:write" fields={TLS_FIELDS} />
        <SettingsView title="HTTPS now" path="/settings/tls/status" />
      </>
    ),
  },
  {
    slug: 'logging',
    label: 'Logging and notifications',
    help: 'What the appliance keeps and sends: dashboard history, the metrics store, remote syslog and email.',
    body: () => (
      <>
        <SettingsSection title="Dashboard history" path="/settings/dashboard-history" writePermission="settings:write" fields={DASHBOARD_HISTORY_FIELDS} />
        <SettingsSection title="Metrics store" path="/settings/metrics-store" writePermission="settings:write" fields={METRICS_STORE_FIELDS} omit={['status']} />
        <SettingsSection title="Remote syslog" path="/settings/syslog" writePermission="settings:write" fields={SYSLOG_FIELDS} />
        <SettingsSection title="Email notifications" path="/notify/smtp/config" writePermission="settings:write" fields={SMTP_FIELDS} />
      </>
    ),
  },
  {
    slug: 'appliance',
    label: 'Banner, console and tuning',
    help: 'The sign-in banner, the local console, and the packet filter\'s state table.',
    body: () => (
      <>
        <SettingsSection title="Banner" path="/system/banner" writePermission="settings:write" fields={BANNER_FIELDS} />
        <SettingsSection title="Console" path="/system/console" writePermission="settings:write" fields={CONSOLE_FIELDS} />
        <SettingsSection title="Packet filter tuning" path="/settings/pf-tuning" writePermission="settings:write" fields={PF_TUNING_FIELDS} />
      </>
    ),
  },
  {
    slug: 'ai',
    label: 'AI analysis',
    help: 'The AI providers the IDS page\'s analysis may ask, with their keys (write-only).',
    body: () => <AiSettings />,
  },
];

/** The System page (`/system/:section?`): a section list of links, then the chosen section's forms. */
export function SystemPage({ section = '' }: { section?: string }) {
  const shown = SECTIONS.find((candidate) => candidate.slug === section);
  if (!shown) return <NotFoundPage />;
  return (
    <Page title="System" help={shown.help}>
      <nav class="subnav" aria-label="System sections">
        <ul>
          {SECTIONS.map(({ slug, label }) => (
            <li key={slug}>
              <a href={slug ? `/system/${slug}` : '/system'} aria-current={slug === shown.slug ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {shown.body()}
    </Page>
  );
}
