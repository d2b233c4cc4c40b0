import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { BLOCKLIST_FORMATS } from './blocklist-format.js';
import { NullableString } from '../common/schemas.js';
import { DaemonReportFields } from '../common/daemon-report-schema.js';

export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'PTR'] as const;
export const BLOCK_ACTIONS = ['nxdomain', 'nodata', 'drop', 'redirect'] as const;
export const ACL_ACTIONS = ['allow', 'deny', 'refuse', 'allow_snoop'] as const;
export const LOCAL_ZONE_TYPES = [
  'transparent', 'typetransparent', 'static', 'redirect', 'deny', 'refuse', 'inform', 'inform_deny', 'inform_redirect',
  'always_transparent', 'always_refuse', 'always_nxdomain', 'nodefault',
] as const;

const DomainText = (description: string) => Type.String({ minLength: 1, maxLength: 253, description });

/** GET/PUT /dns: the host's own nameservers (resolv.conf). */
export const SystemDns = Type.Object({ servers: Type.Array(Type.String(), { maxItems: 16 }) });

/** Blocklist source (wire-format A3 §1.4). Status fields are operational and computed. */
export const BlocklistSource = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128, pattern: '\\S' }),
  category: Type.String({ minLength: 1, maxLength: 64, description: 'free text: ads, tracking, malware, phishing, crypto, adult, social, custom' }),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  format: StringEnum(BLOCKLIST_FORMATS, { description: 'hosts, domains, wildcard (*.name), adblock (||name^), unbound (local-zone lines), rpz' }),
  enabled: Type.Boolean({ default: true }),
  action: StringEnum(BLOCK_ACTIONS, { default: 'nxdomain' }),
  redirect_ip: Type.Optional(NullableString()),
  built_in: Type.Boolean({ default: false, description: 'seeded source; disable instead of deleting' }),
});

export const BlocklistStatusFields = {
  last_updated: Type.Union([Type.Integer(), Type.Null()], { description: 'unix seconds' }),
  last_sha256: NullableString(),
  rule_count: Type.Integer({ description: 'names in the last good download' }),
  last_error: NullableString(),
  names_active: Type.Integer({ description: 'names this source blocks in the running resolver (after earlier sources and the allow-list)' }),
  last_result: NullableString({ description: 'ok, or failed: <reason> (the last good copy stays in use)' }),
};

export const RefreshOutcome = Type.Object({
  source_id: Type.String(),
  ok: Type.Boolean(),
  rule_count: Type.Integer(),
  bytes: Type.Integer(),
  sha256: NullableString(),
  error: NullableString(),
});

export const BlocklistSchedule = Type.Object({
  cron: Type.String({ default: '0 0 3 * * *', description: '6-field cron with seconds: sec min hour dom mon dow' }),
  on_boot: Type.Boolean({ default: true }),
  concurrency: Type.Integer({ minimum: 1, maximum: 32, default: 4 }),
  enabled: Type.Boolean({ default: false, description: 'master switch of blocklisting' }),
  allow_private_sources: Type.Array(Type.String(), {
    default: [],
    maxItems: 64,
    description: 'admin allow-list of IPs/CIDRs a blocklist URL may resolve to although private or loopback (a LAN mirror)',
  }),
  allow_http: Type.Boolean({ default: false, description: 'allow plain http:// sources (https only by default)' }),
});

export const Enabled = Type.Object({ enabled: Type.Boolean() });

/** Whitelist and custom-block entries. */
export const PatternEntry = Type.Object({
  pattern: Type.String({ minLength: 1, maxLength: 255, description: 'domain, optionally with a leading *.' }),
  note: Type.Optional(NullableString({ maxLength: 512 })),
});

/** Resolver configuration (wire-format A3 §1.6), rendered for Unbound. */
export const ResolverConfig = Type.Object({
  backend: StringEnum(['unbound'], { default: 'unbound', description: 'Bulwark renders for Unbound' }),
  enabled: Type.Boolean({ default: false }),
  listen_interfaces: Type.Array(Type.String(), { default: ['0.0.0.0'], maxItems: 64 }),
  port: Type.Integer({ minimum: 1, maximum: 65535, default: 53 }),
  dnssec: Type.Boolean({ default: true }),
  dns64: Type.Boolean({ default: false }),
  register_dhcp: Type.Boolean({ default: true }),
  dhcp_domain: Type.String({ default: 'local', maxLength: 253 }),
  local_zone_type: StringEnum(LOCAL_ZONE_TYPES, { default: 'transparent' }),
  outgoing_interface: Type.Optional(NullableString()),
  num_threads: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  msg_cache_size: Type.Union([Type.String({ pattern: '^\\d+[kmgKMG]?$' }), Type.Integer({ minimum: 0 })], { default: '8m' }),
  rrset_cache_size: Type.Union([Type.String({ pattern: '^\\d+[kmgKMG]?$' }), Type.Integer({ minimum: 0 })], { default: '16m' }),
  cache_max_ttl: Type.Integer({ minimum: 0, default: 86400 }),
  cache_min_ttl: Type.Integer({ minimum: 0, default: 0 }),
  prefetch: Type.Boolean({ default: true }),
  prefetch_key: Type.Boolean({ default: true }),
  infra_host_ttl: Type.Integer({ minimum: 0, default: 900 }),
  unwanted_reply_threshold: Type.Integer({ minimum: 0, default: 10000 }),
  log_queries: Type.Boolean({ default: false }),
  log_replies: Type.Boolean({ default: false }),
  log_verbosity: Type.Integer({ minimum: 0, maximum: 5, default: 1 }),
  query_timeout_ms: Type.Integer({ minimum: 0, default: 0 }),
  hide_identity: Type.Boolean({ default: true }),
  hide_version: Type.Boolean({ default: true }),
  rebind_protection: Type.Boolean({ default: true }),
  private_addresses: Type.Array(Type.String(), { default: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', 'fd00::/8', 'fe80::/10'] }),
  forwarding_enabled: Type.Boolean({ default: true }),
  forwarding_servers: Type.Array(Type.String(), { default: ['1.1.1.1', '8.8.8.8'] }),
  use_system_nameservers: Type.Boolean({ default: false }),
  dot_enabled: Type.Boolean({ default: false }),
  dot_upstream: Type.Array(Type.String({ pattern: '^[^@#\\s]+@\\d{1,5}#[A-Za-z0-9.-]+$' }), {
    default: ['1.1.1.1@853#cloudflare-dns.com', '1.0.0.1@853#cloudflare-dns.com'],
    description: 'ip@port#tls-name',
  }),
  blocklists_enabled: Type.Boolean({ default: false, description: 'legacy URL blocklist; see /dns/blocklists' }),
  blocklist_urls: Type.Array(Type.String(), { default: [] }),
  whitelist: Type.Array(Type.String(), { default: [] }),
  blocklist_action: StringEnum(['nxdomain', 'redirect'], { default: 'nxdomain' }),
  blocklist_redirect_ip: Type.Optional(NullableString()),
  custom_options: Type.String({ default: '', maxLength: 65536, description: 'raw Unbound server-clause lines' }),
  probe_enabled: Type.Boolean({ default: true }),
});

export const ApplyReport = Type.Object({
  backend: Type.String(),
  enabled: Type.Boolean(),
  running: Type.Boolean(),
  probe_udp: Type.Boolean(),
  probe_tcp: Type.Boolean(),
  rolled_back: Type.Boolean(),
  previous: NullableString(),
  message: Type.String(),
  config_file: NullableString(),
  check: Type.Object({ checked: Type.Boolean(), ok: Type.Boolean(), checker: NullableString(), output: Type.String() }),
  simulated: Type.Boolean(),
});

export const ResolverStatus = Type.Object({
  running: Type.Boolean(),
  ...DaemonReportFields,
  version: Type.String(),
  total_hosts: Type.Integer(),
  total_domains: Type.Integer(),
  total_acls: Type.Integer(),
  cache_hits: Type.Integer(),
  cache_misses: Type.Integer(),
  queries_total: Type.Integer(),
  backend: Type.String(),
  listening_udp: Type.Boolean(),
  listening_tcp: Type.Boolean(),
  last_switch_at: NullableString(),
  last_switch_result: NullableString(),
  probe_enabled: Type.Boolean(),
  pending: Type.Boolean({ description: 'configuration changed since the last apply' }),
  simulated: Type.Boolean(),
});

export const DnsStats = Type.Object({
  ts: Type.Integer(),
  running: Type.Boolean(),
  queries_total: Type.Integer(),
  cache: Type.Object({
    entries: Type.Integer(), max_entries: Type.Integer(), hits: Type.Integer(), misses: Type.Integer(),
    insertions: Type.Integer(), evictions: Type.Integer(), hit_rate_pct: Type.Number(),
  }),
  rpz: Type.Object({
    rules: Type.Integer(), zones: Type.Integer(), hits: Type.Integer(),
    per_zone: Type.Array(Type.Object({ name: Type.String(), rules: Type.Integer(), hits: Type.Integer() })),
  }),
  simulated: Type.Boolean(),
});

export const HostOverride = Type.Object({
  hostname: DomainText('host label(s): alphanumerics, -, _ and .'),
  domain: DomainText('zone the host lives in'),
  record_type: StringEnum(RECORD_TYPES, { default: 'A' }),
  value: Type.String({ minLength: 1, maxLength: 4096 }),
  mx_priority: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()])),
  description: Type.Optional(NullableString({ maxLength: 512 })),
  enabled: Type.Boolean({ default: true }),
});

export const DomainOverride = Type.Object({
  domain: DomainText('domain forwarded to server'),
  server: Type.String({ minLength: 1, maxLength: 64, description: 'IP, IP:port or [IPv6]:port' }),
  description: Type.Optional(NullableString({ maxLength: 512 })),
  enabled: Type.Boolean({ default: true }),
});

export const ResolverAcl = Type.Object({
  network: Type.String({ minLength: 1, maxLength: 64, description: 'IP or IP/prefix' }),
  action: StringEnum(ACL_ACTIONS),
  description: Type.Optional(NullableString({ maxLength: 512 })),
});
