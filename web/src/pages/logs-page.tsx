import { LogRotation } from './log-rotation';
import { DnsLive } from './dns-live';
import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { parameterOf } from '../api/client';
import { DataTable } from '../components/data-table';
import { ErrorAlert, Notice, messageOf } from '../components/error-alert';
import { SelectField, TextField } from '../components/fields';
import { Page } from '../components/page';
import { useLoad } from '../components/use-load';
import { RuleForm, type RuleDraft } from './rule-form';

/** One entry of GET /blocked. */
interface BlockedPacket {
  timestamp: string;
  action: string;
  direction: string;
  interface: string;
  protocol: string;
  src_addr: string;
  src_port: number;
  dst_addr: string;
  dst_port: number;
  reason: string;
  rule_id: string | null;
}

interface SimulatedRule {
  rule_id: string;
  priority: number;
  action: string;
  outcome: string;
  reason: string;
}

interface Simulation {
  verdict: string;
  action: string;
  decided_by: { type: 'rule'; rule_id: string } | { type: 'system'; rule: string } | { type: 'default'; policy: string };
  rules: SimulatedRule[];
}

interface AuditEntry {
  id: number;
  created_at: string;
  action: string;
  outcome: string;
  actor: string | null;
  ip_addr: string | null;
  details: string | null;
}

interface LogEntry {
  id: string;
  timestamp: string;
  level: string;
  action: string;
  details: string;
}

/** Refresh of the live packet-filter log, while not paused. */
const LIVE_MS = 3000;
const ported = (protocol: string) => protocol === 'tcp' || protocol === 'udp';
const endpoint = (address: string, port: number) => (port ? `${address}:${port}` : address);

/** The daemon logs a role may read, each behind its own area's read permission. */
const DAEMON_LOGS = [
  { value: 'system', label: 'System log', path: '/logs', permission: 'logs:view' },
  { value: 'audit', label: 'Change audit (packet filter, diagnostics, …)', path: '/logs', permission: 'logs:view' },
  { value: 'dns', label: 'DNS resolver', path: '/dns/resolver/logs', permission: 'dns:read' },
  { value: 'dhcp', label: 'DHCP server', path: '/dhcp/logs', permission: 'dhcp:read' },
  { value: 'proxy', label: 'Reverse proxy', path: '/reverse-proxy/logs', permission: 'proxy:read' },
  { value: 'time', label: 'Time service', path: '/time/logs', permission: 'settings:read' },
] as const;

function PacketFilterLog() {
  const { api, can } = useSession();
  const [paused, setPaused] = useState(false);
  const [tick, setTick] = useState(0);
  const [filters, setFilters] = useState({ interface: '', action: 'any', address: '', port: '', rule: '' });
  const [creating, setCreating] = useState<Partial<RuleDraft> | null>(null);
  const [why, setWhy] = useState<{ packet: BlockedPacket; result: Simulation } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const blocked = useLoad(() => api.get<BlockedPacket[]>('/blocked', { limit: 500 }), `blocked-${tick}`);

  useEffect(() => {
    if (paused) return;
    const timer = setInterval(() => setTick((n) => n + 1), LIVE_MS);
    return () => clearInterval(timer);
  }, [paused]);

  const set = (key: keyof typeof filters) => (value: string) => setFilters((current) => ({ ...current, [key]: value }));
  const rows = (blocked.data ?? []).filter((packet) =>
    (!filters.interface || packet.interface.includes(filters.interface.trim())) &&
    (filters.action === 'any' || packet.action === filters.action) &&
    (!filters.address || packet.src_addr.includes(filters.address.trim()) || packet.dst_addr.includes(filters.address.trim())) &&
    (!filters.port || String(packet.src_port) === filters.port.trim() || String(packet.dst_port) === filters.port.trim()) &&
    (!filters.rule || (packet.rule_id ?? '').includes(filters.rule.trim())));
  const actions = ['any', ...new Set((blocked.data ?? []).map((packet) => packet.action))];

  const createFrom = (packet: BlockedPacket) => {
    setWhy(null);
    setCreated(null);
    setCreating({
      action: 'pass',
      direction: packet.direction === 'out' ? 'out' : 'in',
      protocol: packet.protocol || 'any',
      interface: packet.interface,
      src_addr: packet.src_addr,
      dst_addr: packet.dst_addr,
      dst_port_start: ported(packet.protocol) && packet.dst_port ? String(packet.dst_port) : '',
      description: `From the log: ${packet.protocol} ${endpoint(packet.src_addr, packet.src_port)} -> ${endpoint(packet.dst_addr, packet.dst_port)}`,
    });
  };

  const explain = async (packet: BlockedPacket) => {
    setError(null);
    setCreating(null);
    try {
      const result = await api.request<Simulation>('POST', '/rules/simulate', {
        changesNothing: true,
        body: {
          interface: packet.interface,
          direction: packet.direction === 'out' ? 'out' : 'in',
          protocol: packet.protocol,
          src: packet.src_addr,
          dst: packet.dst_addr,
          ...(ported(packet.protocol) ? { src_port: packet.src_port || null, dst_port: packet.dst_port || null } : {}),
        },
      });
      setWhy({ packet, result: result.data });
    } catch (failure) {
      setError(`Why was this blocked? ${messageOf(failure)}`);
    }
  };

  const decidedBy = (result: Simulation) =>
    result.decided_by.type === 'rule' ? `rule ${result.decided_by.rule_id}` : result.decided_by.type === 'system' ? `the system rule ${result.decided_by.rule}` : `the default policy (${result.decided_by.policy})`;

  return (
    <section aria-labelledby="logs-pf">
      <h2 id="logs-pf">Packet-filter log</h2>
      <div class="form-grid">
        <TextField label="Interface" name="interface" value={filters.interface} onInput={set('interface')} />
        <SelectField label="Action" name="action" value={filters.action} options={actions} onChange={set('action')} />
        <TextField label="Address" name="address" value={filters.address} onInput={set('address')} hint="source or destination" />
        <TextField label="Port" name="port" value={filters.port} onInput={set('port')} inputMode="numeric" hint="source or destination" />
        <TextField label="Rule" name="rule" value={filters.rule} onInput={set('rule')} hint="rule id" />
      </div>
      <p>
        <button type="button" class="secondary" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>{' '}
        <span role="status">{paused ? 'Paused.' : `Live: refreshed every ${LIVE_MS / 1000} s.`}</span>
      </p>
      <ErrorAlert message={error ?? blocked.error} />
      {created && <Notice>{created}</Notice>}
      {creating && (
        <RuleForm
          rule={null}
          initial={creating}
          onCancel={() => setCreating(null)}
          onSubmit={async (body) => {
            await api.post('/rules', body);
            setCreating(null);
            setCreated('Rule created; it takes effect when the changes are applied.');
          }}
        />
      )}
      {why && (
        <div class="simulation" aria-label="Why was this blocked?" role="region">
          <h3>Why was this blocked?</h3>
          <p role="status">
            {why.packet.protocol} {endpoint(why.packet.src_addr, why.packet.src_port)} → {endpoint(why.packet.dst_addr, why.packet.dst_port)} on {why.packet.interface}: <strong>{why.result.verdict}</strong> ({why.result.action}), decided by {decidedBy(why.result)}.
          </p>
          <div class="table-wrap">
            <table>
              <caption>Rules the packet met, in order</caption>
              <thead>
                <tr><th scope="col">Rule</th><th scope="col">Action</th><th scope="col">Outcome</th><th scope="col">Why</th></tr>
              </thead>
              <tbody>
                {why.result.rules.map((rule) => (
                  <tr key={rule.rule_id} class={rule.outcome === 'decides' ? 'deciding' : undefined} aria-current={rule.outcome === 'decides' ? 'true' : undefined}>
                    <td>{rule.rule_id}{rule.outcome === 'decides' && <strong> (deciding rule)</strong>}</td>
                    <td>{rule.action}</td>
                    <td>{rule.outcome}</td>
                    <td>{rule.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <button type="button" class="secondary" onClick={() => setWhy(null)}>Close</button>
        </div>
      )}
      <DataTable
        caption="Blocked and logged packets, newest first"
        rows={rows}
        rowKey={(packet, index) => `${packet.timestamp}-${index}`}
        empty={blocked.loading && !blocked.data ? 'Loading…' : 'No packets logged.'}
        columns={[
          { key: 'timestamp', label: 'Time' },
          { key: 'action', label: 'Action' },
          { key: 'direction', label: 'Direction' },
          { key: 'interface', label: 'Interface' },
          { key: 'protocol', label: 'Protocol' },
          { key: 'source', label: 'Source', render: (packet) => endpoint(packet.src_addr, packet.src_port) },
          { key: 'destination', label: 'Destination', render: (packet) => endpoint(packet.dst_addr, packet.dst_port) },
          { key: 'rule_id', label: 'Rule', render: (packet) => packet.rule_id ?? '—' },
        ]}
        actions={can('rules:read') ? (packet) => (
          <>
            {can('rules:write') && <button type="button" class="secondary" onClick={() => createFrom(packet)}>Create a rule from this</button>}
            <button type="button" class="secondary" onClick={() => void explain(packet)}>Why was this blocked?</button>
          </>
        ) : undefined}
      />
    </section>
  );
}

function AuditTrail() {
  const { api } = useSession();
  const audit = useLoad(() => api.get<AuditEntry[]>('/auth/audit', { limit: 200 }), 'audit');
  return (
    <section aria-labelledby="logs-audit">
      <h2 id="logs-audit">Audit trail</h2>
      <ErrorAlert message={audit.error} />
      <DataTable
        caption="Sign-ins and account changes, newest first"
        rows={audit.data ?? []}
        empty={audit.loading ? 'Loading…' : 'No entries.'}
        columns={[
          { key: 'created_at', label: 'Time' },
          { key: 'action', label: 'Action' },
          { key: 'outcome', label: 'Outcome' },
          { key: 'actor', label: 'Actor', render: (entry) => entry.actor ?? '—' },
          { key: 'ip_addr', label: 'Address', render: (entry) => entry.ip_addr ?? '—' },
          { key: 'details', label: 'Details', render: (entry) => entry.details ?? '' },
        ]}
      />
    </section>
  );
}

function SystemLogs() {
  const { api, can } = useSession();
  const readable = DAEMON_LOGS.filter((log) => can(log.permission));
  const [which, setWhich] = useState<string>(readable[0]?.value ?? 'system');
  const [search, setSearch] = useState('');
  const chosen = readable.find((log) => log.value === which) ?? readable[0];
  const lines = useLoad(async () => {
    if (!chosen) return [];
    if (chosen.value === 'system' || chosen.value === 'audit') {
      const entries = await api.get<LogEntry[]>('/logs', { source: chosen.value, limit: 200 });
      return entries.map((entry) => `${entry.timestamp} ${entry.level} ${entry.action}: ${entry.details}`).filter((line) => line.toLowerCase().includes(search.toLowerCase()));
    }
    return api.get<string[]>(chosen.path, { lines: 200, search: search || undefined });
  }, `${chosen?.value}-${search}`);
  if (!chosen) return null;
  // a search the API refuses (too long) is shown at the search field
  const searchRefused = lines.error && parameterOf(lines.error) === 'search' ? lines.error : null;
  return (
    <section aria-labelledby="logs-system">
      <h2 id="logs-system">System and daemon logs</h2>
      <div class="form-grid">
        <SelectField label="Log" name="log" value={chosen.value} options={readable.map(({ value, label }) => ({ value, label }))} onChange={setWhich} />
        <TextField label="Search" name="search" value={search} onInput={setSearch} hint="case-insensitive text" error={searchRefused} />
      </div>
      <ErrorAlert message={searchRefused ? null : lines.error} />
      <pre class="output" role="log" aria-label={`${chosen.label}, newest first`} tabIndex={0}>
        {(lines.data ?? []).join('\n') || (lines.loading ? 'Loading…' : 'No lines.')}
      </pre>
    </section>
  );
}

/** Logs (issue 34 item 1): the packet-filter log live, the audit trail and the system and daemon logs. */
export function LogsPage() {
  const { can } = useSession();
  return (
    <Page title="Logs" help="The packet-filter log refreshes live; from an entry, create a rule or ask the simulator why it was blocked.">
      {can('connections:view') ? <PacketFilterLog /> : <Notice>The packet-filter log needs the permission connections:view.</Notice>}
      {can('users:read') ? <AuditTrail /> : <Notice>The audit trail needs the permission users:read.</Notice>}
      <SystemLogs />
      <DnsLive />
      <LogRotation />
    </Page>
  );
}
