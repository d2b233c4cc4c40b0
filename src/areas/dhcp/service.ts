import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest } from '../../core/errors.js';
import { ipv4ToNumber, isDomainName, parseIpv4Cidr } from '../../core/ip.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigData } from '../../store/config-store.js';
import { networkOf, renderKea, type KeaHa, type KeaInput } from '../../render/kea/kea.js';
import type { CheckResult, DhcpLease } from '../../platform/daemons.js';
import { daemonRuntime, prepareDaemonRuntime, writeDaemonFile } from '../../platform/daemon-runtime.js';
import { keaHookLibrary, type KeaHookName } from '../../platform/kea-hooks.js';
import { LEASE_EVENT_SCRIPT, writeLeaseEventScript } from '../../platform/kea-lease-events.js';
import { missingTool } from '../../platform/debian-packages.js';
import { publicCheck, renderOr409 } from '../common/checker-refusal.js';
import { DaemonRecord, type DaemonReport } from '../common/daemon-record.js';
import { installAndRun, notInstalled, requirePassedCheck, stopDaemon } from '../common/daemon-install.js';
import { DdnsService } from './ddns-service.js';
import { Semaphore } from '../../core/semaphore.js';

/** Where Debian installs Kea's hooks (named on the simulated platform when this machine has none). */
const DEBIAN_HOOK_DIR = '/usr/lib/x86_64-linux-gnu/kea/hooks';

export const DHCP_KINDS = {
  config: 'dhcp_config',
  subnet: 'dhcp_subnet',
  reservation: 'dhcp_reservation',
  ddns: 'dhcp_ddns',
  ha: 'dhcp_ha',
} as const;

/** Option codes Kea or the protocol manage themselves, and those set through typed subnet fields. */
const RESERVED_CODES = new Set([0, 1, 28, 50, 51, 53, 54, 55, 57, 58, 59, 82, 255]);
const TYPED_CODES: Record<number, string> = { 3: 'gateway', 6: 'dns_servers', 15: 'domain_name', 42: 'ntp_servers' };

function validateOption(option: { code: number; value_type: string; value: string }, index: number): void {
  const where = `body.options.${index}`;
  if (RESERVED_CODES.has(option.code)) throw badRequest(`${where}.code ${option.code} is reserved`);
  if (TYPED_CODES[option.code]) throw badRequest(`${where}.code ${option.code} is set through the ${TYPED_CODES[option.code]} field`);
  const value = option.value;
  const ranges: Record<string, number> = { u8: 0xff, u16: 0xffff, u32: 0xffffffff };
  switch (option.value_type) {
    case 'ip':
      if (isIP(value) !== 4) throw badRequest(`${where}.value must be an IPv4 address`);
      break;
    case 'ips':
      if (!value || value.split(',').some((v) => isIP(v.trim()) !== 4)) throw badRequest(`${where}.value must be a comma-separated list of IPv4 addresses`);
      break;
    case 'string':
      if (!/^[\x20-\x7e]{1,255}$/.test(value)) throw badRequest(`${where}.value must be 1-255 printable ASCII characters`);
      break;
    case 'hex': {
      const hex = value.replace(/[:\s]/g, '');
      if (!hex || hex.length % 2 || hex.length > 510 || !/^[0-9a-fA-F]+$/.test(hex)) throw badRequest(`${where}.value must be an even number (up to 510) of hex digits`);
      break;
    }
    default:
      if (!/^\d+$/.test(value) || Number(value) > ranges[option.value_type]) throw badRequest(`${where}.value must be an integer within ${option.value_type}`);
  }
}

export function validateSubnet(data: ConfigData): void {
  const cidr = parseIpv4Cidr(String(data.network));
  if (!cidr || cidr.prefix > 30) throw badRequest('body.network must be an IPv4 network in CIDR form with a prefix of at most /30');
  const inside = (field: string) => {
    const value = ipv4ToNumber(String(data[field]));
    if (value === null) throw badRequest(`body.${field} must be an IPv4 address`);
    if (value <= cidr.network || value >= cidr.broadcast) throw badRequest(`body.${field} must be a host address inside ${String(data.network)}`);
    return value;
  };
  const start = inside('pool_start');
  const end = inside('pool_end');
  if (start > end) throw badRequest('body.pool_end must not be before pool_start');
  inside('gateway');
  for (const field of ['dns_servers', 'ntp_servers']) {
    ((data[field] as string[] | null | undefined) ?? []).forEach((value, index) => {
      if (isIP(value) !== 4) throw badRequest(`body.${field}.${index} must be an IPv4 address`);
    });
  }
  (data.trusted_relays as string[]).forEach((relay, index) => {
    if (isIP(relay) !== 4 || relay.startsWith('127.')) throw badRequest(`body.trusted_relays.${index} must be a non-loopback IPv4 address`);
  });
  const options = data.options as { code: number; value_type: string; value: string }[];
  const codes = new Set<number>();
  options.forEach((option, index) => {
    validateOption(option, index);
    if (codes.has(option.code)) throw badRequest(`body.options.${index}.code ${option.code} appears twice`);
    codes.add(option.code);
  });
  if (data.domain_name && !isDomainName(String(data.domain_name).replace(/\.$/, ''))) throw badRequest('body.domain_name must be a domain name');
  if (data.subnet_type === 'prefix-delegation' && !data.delegated_length) throw badRequest('body.delegated_length is required for prefix-delegation subnets');
  const renew = data.renewal_time as number | null | undefined;
  const rebind = data.rebinding_time as number | null | undefined;
  if (renew && rebind && renew >= rebind) throw badRequest('body.renewal_time must be shorter than rebinding_time');
}

/** Kea's client-id: hex octets, optionally separated by : or -. */
export function validateReservationClientId(data: ConfigData): void {
  if (data.client_id && !/^[0-9A-Fa-f]{2}(?:[:-]?[0-9A-Fa-f]{2}){0,127}$/.test(String(data.client_id))) throw badRequest('body.client_id must be hex octets such as 01:aa:bb:cc:dd:ee:ff');
}

/** A TSIG secret as tsig-keygen prints it. */
export function isBase64(value: string): boolean {
  return value.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(value);
}

/** The dynamic-DNS names are DNS names; the server an IP address. */
export function validateDdns(data: ConfigData): void {
  for (const field of ['forward_zone', 'reverse_zone_v4', 'reverse_zone_v6', 'tsig_key']) {
    const value = String(data[field] ?? '');
    if (value && !isDomainName(value.replace(/\.$/, ''))) throw badRequest(`body.${field} must be a domain name`);
  }
  if (data.dns_server && !isIP(String(data.dns_server).replace(/:\d{1,5}$/, ''))) throw badRequest('body.dns_server must be an IP address (optionally with :port)');
  if (data.enabled && !data.forward_zone) throw badRequest('body.forward_zone is required when enabled');
}

export function validateConfig(data: ConfigData): void {
  for (const field of ['dns_servers', 'ntp_servers', 'wins_servers']) {
    (data[field] as string[]).forEach((value, index) => {
      if (isIP(value) !== 4) throw badRequest(`body.${field}.${index} must be an IPv4 address`);
    });
  }
  if (data.next_server && isIP(String(data.next_server)) !== 4) throw badRequest('body.next_server must be an IPv4 address');
  if (data.domain_name && !isDomainName(String(data.domain_name).replace(/\.$/, ''))) throw badRequest('body.domain_name must be a domain name');
  (data.domain_search as string[]).forEach((value, index) => {
    if (!isDomainName(value.replace(/\.$/, ''))) throw badRequest(`body.domain_search.${index} must be a domain name`);
  });
  const bootFile = String(data.boot_filename ?? '');
  if (bootFile && (!/^[\x21-\x7e]{1,255}$/.test(bootFile) || /["\\]/.test(bootFile))) {
    throw badRequest('body.boot_filename must be 1-255 printable characters without spaces, quotes or backslashes');
  }
  if (Number(data.max_lease_time) < Number(data.default_lease_time)) throw badRequest('body.max_lease_time must not be shorter than default_lease_time');
}

export interface DhcpActionValue {
  message: string;
  running: boolean;
  config_file: string | null;
  check: CheckResult;
  simulated: boolean;
}

export interface PoolStatsValue {
  subnet: string;
  total: number;
  allocated: number;
  available: number;
  utilization: number;
}

/** Renders for Kea, applies through the platform, and reads leases and statistics back. */
export class DhcpService {
  /** Whether this process last left the daemon running (appliers skip a disabled service that is not). */
  active = false;
  readonly record: DaemonRecord;
  readonly ddns: DdnsService;
  private readonly serial = new Semaphore(1);
  /**
   * The Kea HA relationship as the high-availability pair makes it (cluster pfsync.dhcp_link: the peers are the
   * cluster's nodes), from the stored one; set by the cluster area. Without it the stored one is rendered.
   */
  haLink: ((stored: KeaHa) => KeaHa) | null = null;

  constructor(
    private readonly context: AppContext,
    private readonly parts: { config: SingletonModel; subnets: CollectionModel; reservations: CollectionModel; ddns: SingletonModel; ha: SingletonModel },
  ) {
    this.record = new DaemonRecord(context, 'kea-dhcp4', (running) => { this.active = running; });
    this.ddns = new DdnsService(context, parts.ddns, () => String(parts.config.read().log_level));
  }

  applyState(): { last_apply_at: string | null; last_apply_result: string | null } {
    const { last_apply_at, last_apply_result } = this.record.get();
    return { last_apply_at, last_apply_result };
  }

  /** Running, pid, version, the configuration it runs and the last apply's result (for GET /dhcp/status). */
  async report(): Promise<DaemonReport> {
    return this.record.report(await this.context.platform.daemons.status('kea-dhcp4'));
  }

  /** The runtime directory Kea reads its files from (outside the private data directory). */
  private runtime() {
    return daemonRuntime(this.context.config, 'kea-dhcp4', this.context.platform.simulated);
  }

  /** Kea's input, from the stored configuration. */
  input(): KeaInput {
    const config = this.parts.config.read();
    const ddns = this.parts.ddns.read();
    const stored = this.parts.ha.read() as unknown as KeaHa;
    const ha = this.haLink ? this.haLink(stored) : stored;
    const { stateDir } = this.runtime();
    return {
      global: config as unknown as KeaInput['global'],
      subnets: this.parts.subnets.records() as unknown as KeaInput['subnets'],
      reservations: this.parts.reservations.records() as unknown as KeaInput['reservations'],
      ddns: { enabled: Boolean(ddns.enabled), forward_zone: String(ddns.forward_zone), ttl: Number(ddns.ttl) },
      paths: { leaseFile: join(stateDir, 'kea-leases4.csv'), controlSocket: join(stateDir, 'kea4-ctrl.sock') },
      hooks: { leaseCommands: this.hook('libdhcp_lease_cmds.so'), highAvailability: ha.mode === 'standalone' ? null : this.hook('libdhcp_ha.so'), leaseEvents: this.leaseEvents() },
      ha,
    };
  }

  /**
   * Lease events (the DHCP hooks of plugins and the event hub) come from Kea's run_script hook where it is installed
   * (kea-common ships it); without it Kea serves all the same, only no lease event is announced. Not simulated.
   */
  private leaseEvents(): { library: string; script: string } | null {
    const library = this.context.platform.simulated ? null : keaHookLibrary('libdhcp_run_script.so');
    return library ? { library, script: join(this.runtime().dir, LEASE_EVENT_SCRIPT) } : null;
  }

  /**
   * An installed hook library. On a real platform a missing one is a 503 naming its package (leases are read and
   * released through lease_cmds; HA needs its own hook). The simulated platform names Debian's path.
   */
  private hook(name: KeaHookName): string {
    const path = keaHookLibrary(name);
    if (path) return path;
    if (!this.context.platform.simulated) throw notInstalled('Kea', { missing: missingTool(name) });
    return join(DEBIAN_HOOK_DIR, name);
  }

  /** Renders kea-dhcp4.conf as `name` in the runtime dir; a stored value the renderer refuses is a 409. */
  private renderCandidate(name: string): { file: string; text: string } {
    const runtime = this.runtime();
    prepareDaemonRuntime(runtime);
    const input = this.input();
    if (input.hooks?.leaseEvents) writeLeaseEventScript(runtime);
    const text = renderOr409('Kea', () => renderKea(input));
    return { file: writeDaemonFile(runtime, [name], text), text };
  }

  /** Renders candidates and runs the checkers on them without installing anything (kea-dhcp-ddns too when DDNS is on). */
  async check(): Promise<{ check: CheckResult; text: string; label: string }> {
    const candidate = this.renderCandidate('kea-dhcp4.conf.check');
    let result: { check: CheckResult; text: string; label: string };
    try {
      result = { check: await this.context.platform.daemons.check('kea-dhcp4', candidate.file), text: candidate.text, label: 'Kea' };
    } finally {
      rmSync(candidate.file, { force: true });
    }
    if (!result.check.ok || !this.ddns.enabled()) return result;
    return { ...(await this.ddns.check()), label: 'Kea DHCP-DDNS' };
  }

  /** Renders and checks with `kea-dhcp4 -t`; 503 when Kea is not installed, 409 naming the refused line. */
  private async renderAndCheck(): Promise<{ text: string; check: CheckResult }> {
    const candidate = this.renderCandidate('kea-dhcp4.conf.new');
    const check = await this.context.platform.daemons.check('kea-dhcp4', candidate.file);
    rmSync(candidate.file, { force: true });
    requirePassedCheck(this.context, this.record, 'Kea', check, candidate.text);
    return { text: candidate.text, check: publicCheck(check) };
  }

  /** Installs the checked file and runs Kea with it (409 and the previous file restored when Kea does not come up). */
  private async install(mode: 'start' | 'restart'): Promise<DhcpActionValue> {
    const { text, check } = await this.renderAndCheck();
    try {
      const status = await installAndRun(this.context, this.record, { label: 'Kea', runtime: this.runtime(), fileName: 'kea-dhcp4.conf', text, mode });
      this.active = true;
      return { message: '', running: true, config_file: status.config_file, check, simulated: status.simulated };
    } finally {
      this.active = (await this.context.platform.daemons.status('kea-dhcp4')).running;
    }
  }

  /** One apply or control action at a time (a change's auto-apply must not interleave with an operator's). */
  apply(): Promise<DhcpActionValue> {
    return this.serial.run(() => this.applyNow());
  }

  private async applyNow(): Promise<DhcpActionValue> {
    if (!this.parts.config.read().enabled) {
      // Disabled: the file is still rendered and checked (so it is ready), and Kea stops.
      const { text, check } = await this.renderAndCheck();
      const file = writeDaemonFile(this.runtime(), ['kea-dhcp4.conf'], text);
      if (this.ddns.enabled()) await this.ddns.save();
      const status = await stopDaemon(this.context, this.record);
      await this.ddns.stop();
      this.active = status.running;
      return { message: 'DHCP config saved, Kea stopped', running: status.running, config_file: file, check, simulated: status.simulated };
    }
    // The DHCP-DDNS server first, so Kea's name-change requests have a listener from its first lease on.
    if (this.ddns.enabled()) await this.ddns.apply();
    else await this.ddns.stop();
    const result = await this.install('restart');
    return { ...result, message: `DHCP config applied and Kea restarted${result.simulated ? ' (simulated)' : ''}` };
  }

  control(action: 'start' | 'stop' | 'restart'): Promise<DhcpActionValue> {
    return this.serial.run(() => this.controlNow(action));
  }

  private async controlNow(action: 'start' | 'stop' | 'restart'): Promise<DhcpActionValue> {
    if (action === 'stop') {
      const status = await stopDaemon(this.context, this.record);
      await this.ddns.stop();
      this.active = status.running;
      return { message: 'DHCP stop: Kea stopped', running: status.running, config_file: status.config_file, check: { checked: false, ok: true, checker: null, output: '' }, simulated: status.simulated };
    }
    if (this.ddns.enabled()) await this.ddns.apply();
    const result = await this.install(action);
    return { ...result, message: `DHCP ${action}: Kea running${result.simulated ? ' (simulated)' : ''}` };
  }

  /** Changes to subnets, reservations and the global configuration take effect at once while DHCP is enabled. */
  async autoApply(): Promise<void> {
    if (!this.parts.config.read().enabled) return;
    try {
      await this.apply();
    } catch (error) {
      this.context.log.warn({ err: error }, 'DHCP auto-apply failed');
    }
  }

  async leases(): Promise<DhcpLease[]> {
    return this.context.platform.daemons.dhcpLeases();
  }

  /**
   * Per enabled subnet: pool size and addresses in use, from Kea's own statistics (`statistic-get-all`) while it
   * runs; from the stored pools (nothing in use) while it does not.
   */
  async poolStats(): Promise<PoolStatsValue[]> {
    const statistics = await this.context.platform.daemons.dhcpStatistics();
    const bySubnet = new Map((statistics?.subnets ?? []).map((s) => [s.subnet, s]));
    return this.parts.subnets
      .records()
      .filter((s) => s.enabled && s.subnet_type === 'address')
      .map((subnet) => {
        const network = networkOf(String(subnet.network));
        const counted = bySubnet.get(network);
        const configured = (ipv4ToNumber(String(subnet.pool_end)) ?? 0) - (ipv4ToNumber(String(subnet.pool_start)) ?? 0) + 1;
        const total = counted?.total_addresses ?? configured;
        const allocated = counted?.assigned_addresses ?? 0;
        const available = Math.max(0, total - allocated);
        return { subnet: String(subnet.network), total, allocated, available, utilization: total ? Math.round((allocated / total) * 10000) / 100 : 0 };
      });
  }

  /** The HA relationship: the stored mode, and Kea's own state of it (status-get) while Kea runs with the hook. */
  async haStatus(): Promise<{ mode: string; role: string; state: string | null; peer_state: string | null; healthy: boolean }> {
    const mode = String(this.parts.ha.read().mode);
    const running = (await this.context.platform.daemons.status('kea-dhcp4')).running;
    if (mode === 'standalone') return { mode, role: 'standalone', state: null, peer_state: null, healthy: running };
    const kea = running ? await this.context.platform.daemons.dhcpHighAvailability() : null;
    const role = kea?.role ?? (Number(this.parts.ha.read().node_id ?? 1) === 2 ? (mode === 'hot-standby' ? 'standby' : 'secondary') : 'primary');
    // Healthy: both servers in the state the mode aims for, in touch with each other.
    const healthy = Boolean(kea && kea.in_touch && ['hot-standby', 'load-balancing'].includes(kea.state) && kea.peer_state === kea.state);
    return { mode, role, state: kea?.state ?? null, peer_state: kea?.peer_state ?? null, healthy };
  }

  /** Prometheus exposition: whether Kea runs, the pool figures, and Kea's packet counters. */
  async metrics(): Promise<string> {
    const pools = await this.poolStats();
    const running = (await this.context.platform.daemons.status('kea-dhcp4')).running;
    const statistics = running ? await this.context.platform.daemons.dhcpStatistics() : null;
    const label = (value: string) => value.replace(/["\\\n]/g, '_');
    const packetCounters = Object.entries(statistics?.counters ?? {})
      .filter(([name]) => /^pkt4-[a-z-]+$/.test(name))
      .sort(([a], [b]) => (a < b ? -1 : 1));
    const lines = [
      '# HELP bulwark_dhcp4_up Whether the DHCPv4 server runs.',
      '# TYPE bulwark_dhcp4_up gauge',
      `bulwark_dhcp4_up ${running ? 1 : 0}`,
      '# HELP bulwark_dhcp4_pool_addresses Addresses in the pool of a subnet.',
      '# TYPE bulwark_dhcp4_pool_addresses gauge',
      ...pools.map((p) => `bulwark_dhcp4_pool_addresses{subnet="${label(p.subnet)}"} ${p.total}`),
      '# HELP bulwark_dhcp4_leases_assigned Leases currently assigned in a subnet pool.',
      '# TYPE bulwark_dhcp4_leases_assigned gauge',
      ...pools.map((p) => `bulwark_dhcp4_leases_assigned{subnet="${label(p.subnet)}"} ${p.allocated}`),
      ...(packetCounters.length
        ? [
            '# HELP bulwark_dhcp4_packets_total DHCPv4 packets counted by Kea, by kind (pkt4-received, pkt4-ack-sent, ...).',
            '# TYPE bulwark_dhcp4_packets_total counter',
            ...packetCounters.map(([name, value]) => `bulwark_dhcp4_packets_total{kind="${name.slice(5)}"} ${value}`),
          ]
        : []),
    ];
    return `${lines.join('\n')}\n`;
  }
}
