import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isIP } from 'node:net';
import { Cron } from 'croner';
import { EVENT_TOPICS } from '../../core/events.js';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest, HttpError } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { Semaphore } from '../../core/semaphore.js';
import { isDomainName, isIpOrCidr } from '../../core/ip.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { outboundFetch } from '../../net/outbound.js';
import { adminAllowList, adminDestinationProblem, type SingletonReader } from '../../net/admin-allow-list.js';
import { renderUnbound, ROOT_TRUST_ANCHORS, type UnboundResolver } from '../../render/unbound/unbound.js';
import { renderBlocklistData, renderBlocklistFilter, type BlockAction, type BlockZone } from '../../render/unbound/unbound-blocklist.js';
import { CustomOptionError, parseCustomOptions } from '../../render/unbound/unbound-custom-options.js';
import { daemonRuntime, prepareDaemonRuntime, writeDaemonFile, writeDaemonStateFile, type DaemonRuntime } from '../../platform/daemon-runtime.js';
import { isRegularFileNoFollow } from '../../platform/nofollow-files.js';
import { publicCheck, renderOr409 } from '../common/checker-refusal.js';
import { DaemonRecord, type DaemonReport } from '../common/daemon-record.js';
import { installAndRun, requirePassedCheck, stopDaemon } from '../common/daemon-install.js';
import { parseBlocklist, type BlocklistFormat } from './blocklist-format.js';
import { dataPath, removeDataFile, writeDataFile } from '../common/data-files.js';
import { ServiceState } from '../common/service-state.js';
import type { CheckResult, DaemonStatus } from '../../platform/daemons.js';
import type { PendingFlags } from '../../live/pending-flags.js';
import type { DnsFeed } from '../../live/feeds.js';

export const DNS_KINDS = {
  blocklist: 'dns_blocklist',
  whitelist: 'dns_whitelist',
  customblock: 'dns_customblock',
  host: 'dns_host',
  domain: 'dns_domain',
  acl: 'dns_acl',
  resolver: 'dns_resolver',
  schedule: 'dns_blocklist_schedule',
  system: 'dns_system',
} as const;

const MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 30_000;

interface ResolverState {
  pending: boolean;
  last_switch_at: string | null;
  last_switch_result: string | null;
  backend: string | null;
}
const INITIAL_STATE: ResolverState = { pending: false, last_switch_at: null, last_switch_result: null, backend: null };

export interface RefreshOutcome {
  source_id: string;
  ok: boolean;
  rule_count: number;
  bytes: number;
  sha256: string | null;
  error: string | null;
}

interface BlocklistStatusRow {
  source_id: string;
  last_updated: number | null;
  last_sha256: string | null;
  rule_count: number;
  bytes: number;
  last_error: string | null;
}

/** The 14 seeded sources (all disabled): popular public lists an admin can switch on. */
export const BUILT_IN_SOURCES: { name: string; category: string; url: string; format: BlocklistFormat }[] = [
  { name: 'StevenBlack Hosts', category: 'ads', url: 'https://raw.githubusercontent.com/StevenBlack/hosts/master/hosts', format: 'hosts' },
  { name: 'OISD Big', category: 'ads', url: 'https://big.oisd.nl/domainswild', format: 'domains' },
  { name: 'OISD NSFW', category: 'adult', url: 'https://nsfw.oisd.nl/domainswild', format: 'domains' },
  { name: 'AdGuard DNS', category: 'ads', url: 'https://adguardteam.github.io/AdGuardSDNSFilter/Filters/filter.txt', format: 'adblock' },
  { name: 'EasyList', category: 'ads', url: 'https://easylist.to/easylist/easylist.txt', format: 'adblock' },
  { name: 'EasyPrivacy', category: 'tracking', url: 'https://easylist.to/easylist/easyprivacy.txt', format: 'adblock' },
  { name: 'Disconnect Tracking', category: 'tracking', url: 'https://s3.amazonaws.com/lists.disconnect.me/simple_tracking.txt', format: 'domains' },
  { name: 'URLhaus', category: 'malware', url: 'https://urlhaus.abuse.ch/downloads/hostfile/', format: 'hosts' },
  { name: 'DigitalSide Threat', category: 'malware', url: 'https://osint.digitalside.it/Threat-Intel/lists/latestdomains.txt', format: 'domains' },
  { name: 'Phishing Army', category: 'phishing', url: 'https://phishing.army/download/phishing_army_blocklist.txt', format: 'domains' },
  { name: 'NoCoin Mining', category: 'crypto', url: 'https://raw.githubusercontent.com/hoshsadiq/adblock-nocoin-list/master/hosts.txt', format: 'hosts' },
  { name: 'CoinBlocker', category: 'crypto', url: 'https://zerodot1.gitlab.io/CoinBlockerLists/hosts_browser', format: 'hosts' },
  { name: 'Smart-TV Tracking', category: 'tracking', url: 'https://raw.githubusercontent.com/Perflyst/PiHoleBlocklist/master/SmartTV.txt', format: 'domains' },
  { name: 'Facebook', category: 'social', url: 'https://raw.githubusercontent.com/anudeepND/blacklist/master/facebook.txt', format: 'hosts' },
];

// ---- validation of the collections (pure; used by the declarations in routes.ts) ----

export function validateHost(data: ConfigData): void {
  const hostname = String(data.hostname);
  const domain = String(data.domain);
  const what = 'must be DNS labels (letters, digits, - and _, 1-63 each, no leading or trailing -) joined by dots';
  if (!isDomainName(hostname)) throw badRequest(`body.hostname ${what}`);
  if (!isDomainName(domain)) throw badRequest(`body.domain ${what}`);
  if (hostname.length + domain.length + 1 > 253) throw badRequest('body.hostname and body.domain together must be at most 253 characters');
  const value = String(data.value);
  switch (data.record_type) {
    case 'A':
      if (isIP(value) !== 4) throw badRequest('body.value must be an IPv4 address for an A record');
      break;
    case 'AAAA':
      if (isIP(value) !== 6) throw badRequest('body.value must be an IPv6 address for an AAAA record');
      break;
    case 'TXT':
      // Any other character is rendered as a \DDD escape inside one TXT string (see render/unbound/unbound-syntax.ts).
      if (value.length > 4096 || /[\x00-\x1f\x7f]/.test(value)) throw badRequest('body.value must be at most 4096 characters on one line (no control characters) for a TXT record');
      break;
    default:
      if (!isDomainName(value.replace(/\.$/, ''))) throw badRequest(`body.value must be a domain name for a ${String(data.record_type)} record`);
  }
}

export function validateDomainOverride(data: ConfigData): void {
  if (!isDomainName(String(data.domain).replace(/\.$/, ''))) throw badRequest('body.domain must be a domain name');
  const server = String(data.server);
  const ok = isIP(server) || /^\d+\.\d+\.\d+\.\d+:\d{1,5}$/.test(server) && isIP(server.split(':')[0]) === 4 || /^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/.test(server) && isIP(server.slice(1, server.indexOf(']'))) === 6;
  if (!ok) throw badRequest('body.server must be an IP address, IPv4:port or [IPv6]:port');
}

export function validateAcl(data: ConfigData): void {
  if (!isIpOrCidr(String(data.network))) throw badRequest('body.network must be an IP address or IP/prefix');
}

export function validatePattern(data: ConfigData): void {
  const pattern = String(data.pattern).toLowerCase();
  if (!isDomainName(pattern, { wildcard: true, requireDot: true }) || /(^-|-\.|\.-|-$)/.test(pattern.replace(/^\*\./, ''))) {
    throw badRequest('body.pattern must be a domain name with at least one dot (optionally starting with *.), labels of 1-63 letters, digits or -');
  }
}

export function validateResolver(data: ConfigData): void {
  const listFields: [string, (v: string) => boolean, string][] = [
    ['listen_interfaces', (v) => isIP(v) !== 0, 'an IP address'],
    ['forwarding_servers', (v) => isIP(v.replace(/^\[|\](:\d+)?$/g, '').replace(/:\d+$/, '')) !== 0 || isIP(v) !== 0, 'an IP address (optionally with :port)'],
    ['private_addresses', isIpOrCidr, 'an IP address or CIDR'],
  ];
  for (const [field, ok, what] of listFields) {
    const values = (data[field] as string[] | undefined) ?? [];
    values.forEach((value, index) => {
      if (!ok(value)) throw badRequest(`body.${field}.${index} must be ${what}`);
    });
  }
  ((data.dot_upstream as string[] | undefined) ?? []).forEach((value, index) => {
    const match = /^([^@#]+)@(\d{1,5})#(.+)$/.exec(value);
    if (!match || !isIP(match[1]) || Number(match[2]) > 65535 || !isDomainName(match[3])) throw badRequest(`body.dot_upstream.${index} must be ip@port#tls-name`);
  });
  if (data.outgoing_interface && !isIP(String(data.outgoing_interface))) throw badRequest('body.outgoing_interface must be an IP address');
  if (data.blocklist_redirect_ip && !isIP(String(data.blocklist_redirect_ip))) throw badRequest('body.blocklist_redirect_ip must be an IP address');
  if (data.dhcp_domain && !isDomainName(String(data.dhcp_domain))) throw badRequest('body.dhcp_domain must be a domain name');
  if (Number(data.cache_min_ttl) > Number(data.cache_max_ttl)) throw badRequest('body.cache_min_ttl must not exceed cache_max_ttl');
  try {
    parseCustomOptions(String(data.custom_options ?? ''));
  } catch (error) {
    if (error instanceof CustomOptionError) throw badRequest(`body.custom_options ${error.message}`);
    throw error;
  }
}

/** Create-time checks of a blocklist source URL: a web URL, and no literal blocked address unless allow-listed. */
export function validateBlocklistSource(data: ConfigData, store: SingletonReader, existing?: ConfigObject): void {
  let url: URL;
  try {
    url = new URL(String(data.url));
  } catch {
    throw badRequest('body.url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('body.url must start with http:// or https://');
  if (/[\x00-\x1f\x7f]/.test(String(data.name))) throw badRequest('body.name must not contain control characters');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = adminDestinationProblem(host, store);
  if (refused) throw badRequest(`body.url: ${refused}`);
  if (data.action === 'redirect' && !(typeof data.redirect_ip === 'string' && isIP(data.redirect_ip))) {
    throw badRequest('body.redirect_ip must be an IP address when action is redirect');
  }
  if (data.redirect_ip === '') data.redirect_ip = null;
  if (existing ? data.built_in !== existing.data.built_in : data.built_in === true) {
    throw badRequest('body.built_in is set by the appliance and cannot be changed');
  }
}

/** The DNS area's logic: rendering for Unbound, applying, blocklist downloads. */
export class DnsService {
  /** Whether this process last left the daemon running (appliers skip a disabled service that is not). */
  active = false;
  readonly state: ServiceState;
  private readonly statusRead;
  private readonly statusWrite;
  private readonly statusDelete;
  private readonly statusIds;
  readonly record: DaemonRecord;
  private timers: NodeJS.Timeout[] = [];
  private readonly unsubscribers: (() => void)[] = [];
  private readonly serial = new Semaphore(1);
  private nextScheduledRun: number | null = null;

  constructor(
    private readonly context: AppContext,
    private readonly parts: {
      blocklists: CollectionModel;
      whitelist: CollectionModel;
      customblocks: CollectionModel;
      hosts: CollectionModel;
      domains: CollectionModel;
      acls: CollectionModel;
      resolver: SingletonModel;
      schedule: SingletonModel;
    },
    /** Where the resolver's pending flag is announced (GET /pending reports it as `dns`), and its events go. */
    private readonly outlets: { flags: PendingFlags; events: DnsFeed },
  ) {
    this.state = new ServiceState(context.db, context.clock);
    this.record = new DaemonRecord(context, 'unbound', (running) => { this.active = running; });
    this.statusRead = context.db.prepare('SELECT * FROM dns_blocklist_status WHERE source_id = ?');
    this.statusWrite = context.db.prepare(
      `INSERT INTO dns_blocklist_status (source_id, last_updated, last_sha256, rule_count, bytes, last_error) VALUES (@source_id, @last_updated, @last_sha256, @rule_count, @bytes, @last_error)
       ON CONFLICT(source_id) DO UPDATE SET last_updated = excluded.last_updated, last_sha256 = excluded.last_sha256, rule_count = excluded.rule_count, bytes = excluded.bytes, last_error = excluded.last_error`,
    );
    this.statusDelete = context.db.prepare('DELETE FROM dns_blocklist_status WHERE source_id = ?');
    this.statusIds = context.db.prepare('SELECT source_id FROM dns_blocklist_status');
  }

  private get dataDir(): string {
    return this.context.config.dataDir;
  }

  // ---- pending flag ----

  resolverState(): ResolverState {
    return this.state.get('dns.resolver', INITIAL_STATE);
  }

  markPending(): void {
    this.state.patch('dns.resolver', INITIAL_STATE, { pending: true });
    this.outlets.flags.announce('dns', true);
  }

  /** A resolver that is off and not running has nothing unapplied: it renders the stored configuration when it starts. */
  clearPending(): void {
    if (!this.resolverState().pending) return;
    this.state.patch('dns.resolver', INITIAL_STATE, { pending: false });
    this.outlets.flags.announce('dns', false);
  }

  // ---- blocklist status (operational, computed into the records) ----

  blocklistStatus(id: string): Omit<BlocklistStatusRow, 'source_id' | 'bytes'> & { names_active: number; last_result: string | null } {
    const row = this.statusRead.get(id) as BlocklistStatusRow | undefined;
    const kept = row?.rule_count ? `; the last good copy (${row.rule_count} names) stays in use` : '';
    return {
      last_updated: row?.last_updated ?? null,
      last_sha256: row?.last_sha256 ?? null,
      rule_count: row?.rule_count ?? 0,
      last_error: row?.last_error ?? null,
      names_active: this.activeNames(id),
      last_result: !row ? null : row.last_error ? `failed: ${row.last_error}${kept}` : 'ok',
    };
  }

  /** Drops the download state and list file of every source that no longer exists. */
  forgetRemovedBlocklists(): void {
    for (const { source_id: id } of this.statusIds.all() as { source_id: string }[]) {
      if (this.context.store.get(DNS_KINDS.blocklist, id)) continue;
      this.statusDelete.run(id);
      removeDataFile(this.dataDir, ['dns', 'lists', `${id}.txt`]);
    }
  }

  seedBuiltIns(): void {
    const { store } = this.context;
    if (this.state.get('dns.seeded', { done: false }).done) return;
    store.transaction(() => {
      for (const source of BUILT_IN_SOURCES) {
        if (store.list(DNS_KINDS.blocklist).some((o) => o.data.name === source.name)) continue;
        store.insert(DNS_KINDS.blocklist, { ...source, enabled: false, action: 'nxdomain', redirect_ip: null, built_in: true });
      }
    });
    this.state.set('dns.seeded', { done: true });
  }

  schedule(): { cron: string; on_boot: boolean; concurrency: number; enabled: boolean; allow_private_sources: string[]; allow_http: boolean } {
    return this.parts.schedule.read() as ReturnType<DnsService['schedule']>;
  }

  /** Downloads, parses and stores one source; re-renders the resolver when it changed. */
  async refresh(id: string, options: { reload?: boolean } = {}): Promise<RefreshOutcome> {
    const fail = (error: string, extra: Partial<RefreshOutcome> = {}): RefreshOutcome => ({ source_id: id, ok: false, rule_count: 0, bytes: 0, sha256: null, error, ...extra });
    const schedule = this.schedule();
    if (!schedule.enabled) return fail('blocklisting is turned off: turn it on first (PUT /api/v1/dns/blocklists/enabled)');
    const source = this.context.store.get(DNS_KINDS.blocklist, id);
    if (!source) return fail('source not found');
    if (!source.data.enabled) {
      removeDataFile(this.dataDir, ['dns', 'lists', `${id}.txt`]);
      this.statusWrite.run({ source_id: id, last_updated: this.nowSeconds(), last_sha256: null, rule_count: 0, bytes: 0, last_error: null });
      if (options.reload !== false) await this.reloadIfRunning();
      return { source_id: id, ok: true, rule_count: 0, bytes: 0, sha256: null, error: null };
    }
    const previous = this.statusRead.get(id) as BlocklistStatusRow | undefined;
    let body: Buffer;
    try {
      body = await this.download(String(source.data.url), schedule);
    } catch (error) {
      const message = (error as Error).message;
      this.statusWrite.run({ ...this.rowOf(id, previous), last_error: message });
      return fail(message);
    }
    const sha256 = createHash('sha256').update(body).digest('hex');
    const listFile = ['dns', 'lists', `${id}.txt`];
    if (previous?.last_sha256 === sha256 && existsSync(dataPath(this.dataDir, ...listFile))) {
      this.statusWrite.run({ ...this.rowOf(id, previous), last_updated: this.nowSeconds(), last_error: null });
      return { source_id: id, ok: true, rule_count: previous.rule_count, bytes: body.length, sha256, error: null };
    }
    // The allow-list is applied when the filter is rendered, so removing an entry takes effect without a download.
    const domains = parseBlocklist(body.toString('utf8'), source.data.format as BlocklistFormat);
    writeDataFile(this.dataDir, listFile, domains.join('\n') + (domains.length ? '\n' : ''));
    this.statusWrite.run({ source_id: id, last_updated: this.nowSeconds(), last_sha256: sha256, rule_count: domains.length, bytes: body.length, last_error: null });
    if (options.reload !== false) await this.reloadIfRunning();
    return { source_id: id, ok: true, rule_count: domains.length, bytes: body.length, sha256, error: null };
  }

  /** Refreshes every enabled source, at most `concurrency` at a time; one reload at the end. */
  async refreshAll(): Promise<RefreshOutcome[]> {
    const schedule = this.schedule();
    if (!schedule.enabled) return [];
    const sources = this.parts.blocklists.objects().filter((o) => o.data.enabled);
    const outcomes: RefreshOutcome[] = new Array(sources.length);
    let next = 0;
    const worker = async () => {
      while (next < sources.length) {
        const index = next++;
        outcomes[index] = await this.refresh(sources[index].id, { reload: false });
      }
    };
    await Promise.all(Array.from({ length: Math.min(schedule.concurrency, sources.length) }, worker));
    await this.reloadIfRunning();
    return outcomes;
  }

  async setEnabled(enabled: boolean): Promise<{ enabled: boolean; refreshed: RefreshOutcome[] }> {
    this.parts.schedule.write({ enabled });
    const refreshed = enabled ? await this.refreshAll() : [];
    if (!enabled) await this.reloadIfRunning();
    return { enabled, refreshed };
  }

  private rowOf(id: string, previous: BlocklistStatusRow | undefined): BlocklistStatusRow {
    return previous ?? { source_id: id, last_updated: null, last_sha256: null, rule_count: 0, bytes: 0, last_error: null };
  }

  private nowSeconds(): number {
    return Math.floor(this.context.clock.now() / 1000);
  }

  private async download(url: string, schedule: ReturnType<DnsService['schedule']>): Promise<Buffer> {
    // The administrator's list decides (settings:write); the schedule's own list may only repeat it.
    const response = await outboundFetch(url, {}, { allowList: adminAllowList(this.context.store), allowHttp: schedule.allow_http, timeoutMs: DOWNLOAD_TIMEOUT_MS, maxBytes: MAX_DOWNLOAD_BYTES });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`download failed: HTTP ${response.status}`);
    }
    return Buffer.from(await response.arrayBuffer());
  }

  // ---- rendering and applying ----

  /** The runtime directory Unbound reads its files from (outside the private data directory). */
  private runtime() {
    return daemonRuntime(this.context.config, 'unbound', this.context.platform.simulated);
  }

  /**
   * What the blocklist filter enforces, in precedence order: custom blocks, then each enabled source in list
   * order (when blocklisting is on); and the names it never blocks: the allow-list, host and domain overrides.
   */
  private blocking(): { zones: BlockZone[]; allow: string[] } {
    const hosts = this.parts.hosts.objects().map((o) => o.data).filter((h) => h.enabled);
    const domains = this.parts.domains.objects().map((o) => o.data).filter((d) => d.enabled);
    const bare = (pattern: unknown) => String(pattern).toLowerCase().replace(/^\*\./, '').replace(/\.$/, '');
    const allow = [
      ...this.parts.whitelist.objects().map((o) => bare(o.data.pattern)),
      // Names the appliance answers itself are never blocked.
      ...hosts.map((h) => bare(`${String(h.hostname)}.${String(h.domain)}`)),
      ...domains.map((d) => bare(d.domain)),
    ];
    const zones: BlockZone[] = [{ label: 'custom', action: 'nxdomain', redirectIp: null, names: this.parts.customblocks.objects().map((o) => bare(o.data.pattern)) }];
    if (this.schedule().enabled) {
      for (const source of this.parts.blocklists.objects()) {
        if (!source.data.enabled) continue;
        const listPath = dataPath(this.dataDir, 'dns', 'lists', `${source.id}.txt`);
        if (!existsSync(listPath)) continue;
        const names = readFileSync(listPath, 'utf8').split('\n').filter(Boolean);
        zones.push({ label: `blocklist-${source.id}`, action: source.data.action as BlockAction, redirectIp: (source.data.redirect_ip as string | null) ?? null, names });
      }
    }
    return { zones, allow: [...new Set(allow)] };
  }

  /**
   * Writes the blocklist filter (script and data, named by the data's hash, so a file in use is never
   * rewritten and a restored configuration still finds its own) and returns the script's path; null when
   * nothing is blocked.
   */
  private renderFilter(runtime: DaemonRuntime): { script: string | null; counts: Record<string, number> } {
    const { zones, allow } = this.blocking();
    if (zones.every((zone) => zone.names.length === 0)) return { script: null, counts: {} };
    const rendered = renderOr409('Unbound', () => renderBlocklistData(zones, allow));
    const counts = Object.fromEntries(rendered.counts.map((c) => [c.label, c.names]));
    const name = createHash('sha256').update(rendered.data).digest('hex').slice(0, 32);
    const dataFile = join(runtime.dir, 'blocklists', `${name}.tsv`);
    const script = join(runtime.dir, 'blocklists', `${name}.py`);
    if (!existsSync(dataFile)) writeDaemonFile(runtime, ['blocklists', `${name}.tsv`], rendered.data);
    if (!existsSync(script)) writeDaemonFile(runtime, ['blocklists', `${name}.py`], renderOr409('Unbound', () => renderBlocklistFilter(dataFile)));
    return { script, counts };
  }

  /** Names each source contributes to the running filter (after earlier sources and the allow-list). */
  activeNames(id: string): number {
    return this.state.get<Record<string, number>>('dns.blocklist-counts', {})[`blocklist-${id}`] ?? 0;
  }

  /** Removes filter files the installed configuration no longer names (the rendered ones are never rewritten). */
  private removeUnusedFilters(runtime: DaemonRuntime): void {
    const installed = join(runtime.dir, 'unbound.conf');
    const text = existsSync(installed) ? readFileSync(installed, 'utf8') : '';
    const script = /python-script:\s*"([^"]+)"/.exec(text)?.[1] ?? '';
    const keep = script ? new Set([basename(script), basename(script).replace(/\.py$/, '.tsv')]) : new Set<string>();
    const dir = join(runtime.dir, 'blocklists');
    if (!existsSync(dir)) return;
    for (const file of readdirSync(dir)) if (!keep.has(file)) rmSync(join(dir, file), { force: true });
  }

  /** Writes the filter and a candidate unbound.conf into the runtime dir. Pure rendering lives in render/unbound/. */
  async render(): Promise<{ file: string; text: string; counts: Record<string, number> }> {
    const runtime = this.runtime();
    prepareDaemonRuntime(runtime);
    const resolver = this.parts.resolver.read();
    const hosts = this.parts.hosts.objects().map((o) => o.data);
    const domains = this.parts.domains.objects().map((o) => o.data);
    const filter = this.renderFilter(runtime);
    const trustAnchorFile = join(runtime.stateDir, 'root.key');
    // Unbound rewrites the trust anchor itself (RFC 5011), so it lives in the state directory it may write.
    // Anything but a regular file there (a link the unbound user planted, even to a file) is replaced.
    if (!isRegularFileNoFollow(trustAnchorFile)) writeDaemonStateFile(runtime, 'root.key', `${ROOT_TRUST_ANCHORS}\n`);
    const reservations = resolver.register_dhcp ? this.context.store.list('dhcp_reservation').map((o) => o.data).filter((r) => r.hostname) : [];
    const text = renderOr409('Unbound', () => renderUnbound({
      resolver: resolver as unknown as UnboundResolver,
      hosts: hosts as never,
      domains: domains as never,
      acls: this.parts.acls.objects().map((o) => o.data) as never,
      dhcpNames: reservations.map((r) => ({ hostname: String(r.hostname), ip: String(r.ip_address) })).filter((r) => isDomainName(r.hostname)),
      systemNameservers: readHostNameservers(),
      blocklistFilter: filter.script,
      paths: {
        directory: runtime.dir,
        pidfile: join(runtime.stateDir, 'unbound.pid'),
        controlSocket: join(runtime.stateDir, 'unbound.ctl'),
        trustAnchorFile,
        logfile: '',
      },
    }));
    return { file: writeDaemonFile(runtime, ['unbound.conf.new'], text), text, counts: filter.counts };
  }

  /** Running, pid, version, the configuration it runs and the last apply's result (for GET /dns/resolver/status). */
  async report(): Promise<DaemonReport> {
    return this.record.report(await this.context.platform.daemons.status('unbound'));
  }

  /**
   * Renders, checks with unbound-checkconf, installs the file and (re)starts or stops Unbound. 503 when Unbound
   * (or what its configuration needs) is not installed; 409 when the checker refuses, or when Unbound does not
   * come up (after the previous configuration has been restored and restarted).
   */
  apply(mode: 'apply' | 'start' | 'stop' | 'restart'): Promise<ApplyReportValue> {
    // One apply at a time: a scheduled refresh must not restart Unbound in the middle of an operator's apply.
    return this.serial.run(() => this.applyNow(mode));
  }

  private async applyNow(mode: 'apply' | 'start' | 'stop' | 'restart'): Promise<ApplyReportValue> {
    const resolver = this.parts.resolver.read();
    const enabled = mode === 'start' || mode === 'restart' ? true : mode === 'stop' ? false : Boolean(resolver.enabled);
    const previousState = this.resolverState();
    const runtime = this.runtime();
    const configFile = join(runtime.dir, 'unbound.conf');
    const base = { backend: 'unbound', enabled, previous: previousState.backend, rolled_back: false, config_file: configFile, simulated: this.context.platform.simulated };
    if (!enabled) {
      const status = await stopDaemon(this.context, this.record);
      this.active = status.running;
      this.recordSwitch('ok_disabled', false);
      const check: CheckResult = { checked: false, ok: true, checker: null, output: 'not rendered: the resolver is stopped' };
      return { ...base, running: status.running, probe_udp: status.running, probe_tcp: status.running, message: 'DNS resolver stopped', check };
    }
    let candidate: Awaited<ReturnType<DnsService['render']>>;
    try {
      candidate = await this.render();
    } catch (error) {
      if (error instanceof HttpError) this.recordSwitch('failed: a stored value cannot be rendered', true);
      throw error;
    }
    const check = await this.context.platform.daemons.check('unbound', candidate.file);
    rmSync(candidate.file, { force: true });
    try {
      requirePassedCheck(this.context, this.record, 'Unbound', check, candidate.text);
    } catch (error) {
      this.recordSwitch(`failed: ${check.missing ? 'not installed' : `${check.checker?.split(' ')[0] ?? 'the checker'} refused the configuration`}`, true);
      throw error;
    }
    let status: DaemonStatus;
    try {
      status = await installAndRun(this.context, this.record, { label: 'Unbound', runtime, fileName: 'unbound.conf', text: candidate.text, mode: mode === 'start' ? 'start' : 'restart' });
    } catch (error) {
      this.active = (await this.context.platform.daemons.status('unbound')).running;
      this.recordSwitch(this.record.get().last_apply_result ?? 'failed', true);
      throw error;
    }
    this.active = true;
    this.state.set('dns.blocklist-counts', candidate.counts);
    this.removeUnusedFilters(runtime);
    this.recordSwitch('ok', false);
    return {
      ...base,
      running: true,
      probe_udp: true,
      probe_tcp: true,
      message: `DNS resolver ${mode === 'apply' ? 'applied' : mode === 'start' ? 'started' : 'restarted'}${status.simulated ? ' (simulated)' : ''}`,
      check: publicCheck(check),
    };
  }

  /** After list changes: re-render and restart only when the resolver is running (nothing starts by surprise). */
  async reloadIfRunning(): Promise<void> {
    if (!(await this.context.platform.daemons.status('unbound')).running) return;
    try {
      await this.apply('restart');
    } catch (error) {
      this.context.log.warn({ err: error }, 'DNS reload after a list change failed');
    }
  }

  private recordSwitch(result: string, pending: boolean): void {
    this.state.patch('dns.resolver', INITIAL_STATE, { last_switch_at: isoTime(this.context.clock.now()), last_switch_result: result, backend: 'unbound', pending });
    this.outlets.flags.announce('dns', pending);
  }

  // ---- the blocklist schedule ----

  start(): void {
    // Query and block events read from the resolver go to /dns/stream (the platform bounds their rate).
    // Blocks are also announced on the event hub (plugins' dns_query hook; the platform bounds their rate).
    const unsubscribe = this.context.platform.daemons.dnsEvents((event) => {
      this.outlets.events.publish(event);
      if (event.type === 'block') this.context.events.emit(EVENT_TOPICS.dnsBlock, { ...event.data });
    });
    this.unsubscribers.push(unsubscribe);
    const tick = () => {
      const schedule = this.schedule();
      if (!schedule.enabled) {
        this.nextScheduledRun = null;
        return;
      }
      const now = this.context.clock.now();
      if (this.nextScheduledRun === null) {
        this.nextScheduledRun = nextRun(schedule.cron, now);
        return;
      }
      if (now >= this.nextScheduledRun) {
        this.nextScheduledRun = nextRun(schedule.cron, now);
        this.refreshAll().catch((error) => this.context.log.warn({ err: error }, 'scheduled blocklist refresh failed'));
      }
    };
    const interval = setInterval(tick, 60_000);
    interval.unref();
    this.timers.push(interval);
    const boot = setTimeout(() => {
      const schedule = this.schedule();
      if (schedule.enabled && schedule.on_boot) this.refreshAll().catch((error) => this.context.log.warn({ err: error }, 'boot blocklist refresh failed'));
    }, 15_000);
    boot.unref();
    this.timers.push(boot);
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
  }
}

export type ApplyReportValue = {
  backend: string;
  enabled: boolean;
  running: boolean;
  probe_udp: boolean;
  probe_tcp: boolean;
  rolled_back: boolean;
  previous: string | null;
  message: string;
  config_file: string | null;
  check: CheckResult;
  simulated: boolean;
};

/** Validates a 6-field cron expression (seconds first); throws 400 naming it. */
export function validateCron(expression: string): void {
  if (expression.trim().split(/\s+/).length !== 6) throw badRequest(`body.cron: invalid cron: "${expression}" must have 6 fields (sec min hour dom mon dow)`);
  try {
    new Cron(expression, { paused: true });
  } catch (error) {
    throw badRequest(`body.cron: invalid cron: ${(error as Error).message}`);
  }
}

function nextRun(expression: string, now: number): number | null {
  try {
    return new Cron(expression, { paused: true }).nextRun(new Date(now))?.getTime() ?? null;
  } catch {
    return null;
  }
}

/** The `nameserver` lines of the host's resolv.conf. */
export function readHostNameservers(file = '/etc/resolv.conf'): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1])
      .filter((value): value is string => !!value && isIP(value) !== 0);
  } catch {
    return [];
  }
}
