import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { outboundFetch } from '../../net/outbound.js';
import { adminAllowList } from '../../net/admin-allow-list.js';
import { dataPath, removeDataFile, writeDataFile } from '../common/data-files.js';
import type { ServiceState } from '../common/service-state.js';
import { parseBlocklist, type BlocklistFormat } from './blocklist-format.js';
import type { BlocklistFilter } from './blocklist-filter.js';
import { DNS_KINDS } from './kinds.js';

const MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 30_000;

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

/**
 * Blocklist sources: their downloads (through the outbound guard), the parsed list files in the data directory,
 * each source's download status, and the seeded built-in sources. A changed list reaches a running resolver
 * through `reloadIfRunning`.
 */
export class BlocklistDownloads {
  private readonly statusRead;
  private readonly statusWrite;
  private readonly statusDelete;
  private readonly statusIds;

  constructor(
    private readonly context: AppContext,
    private readonly parts: { blocklists: CollectionModel; schedule: SingletonModel },
    private readonly state: ServiceState,
    private readonly filter: BlocklistFilter,
    private readonly reloadIfRunning: () => Promise<void>,
  ) {
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

  blocklistStatus(id: string): Omit<BlocklistStatusRow, 'source_id' | 'bytes'> & { names_active: number; last_result: string | null } {
    const row = this.statusRead.get(id) as BlocklistStatusRow | undefined;
    const kept = row?.rule_count ? `; the last good copy (${row.rule_count} names) stays in use` : '';
    return {
      last_updated: row?.last_updated ?? null,
      last_sha256: row?.last_sha256 ?? null,
      rule_count: row?.rule_count ?? 0,
      last_error: row?.last_error ?? null,
      names_active: this.filter.activeNames(id),
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
    return this.parts.schedule.read() as ReturnType<BlocklistDownloads['schedule']>;
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

  private async download(url: string, schedule: ReturnType<BlocklistDownloads['schedule']>): Promise<Buffer> {
    // The administrator's list decides (settings:write); the schedule's own list may only repeat it.
    const response = await outboundFetch(url, {}, { allowList: adminAllowList(this.context.store), allowHttp: schedule.allow_http, timeoutMs: DOWNLOAD_TIMEOUT_MS, maxBytes: MAX_DOWNLOAD_BYTES });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`download failed: HTTP ${response.status}`);
    }
    return Buffer.from(await response.arrayBuffer());
  }
}
