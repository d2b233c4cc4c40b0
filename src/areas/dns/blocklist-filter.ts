import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { renderBlocklistData, renderBlocklistFilter, type BlockAction, type BlockZone } from '../../render/unbound/unbound-blocklist.js';
import { writeDaemonFile, type DaemonRuntime } from '../../platform/daemon-runtime.js';
import { renderOr409 } from '../common/checker-refusal.js';
import { dataPath } from '../common/data-files.js';
import type { ServiceState } from '../common/service-state.js';

const COUNTS_STATE = 'dns.blocklist-counts';

/**
 * The blocklist filter Unbound runs: which names it blocks (custom blocks and the downloaded lists) and never
 * blocks (the allow-list and the names the appliance answers itself), its files in Unbound's runtime directory,
 * and how many names each source contributes to the filter that is running.
 */
export class BlocklistFilter {
  constructor(
    private readonly context: AppContext,
    private readonly parts: { blocklists: CollectionModel; whitelist: CollectionModel; customblocks: CollectionModel; hosts: CollectionModel; domains: CollectionModel },
    private readonly state: ServiceState,
    /** Whether blocklisting is on (the downloaded lists count only then). */
    private readonly listsEnabled: () => boolean,
  ) {}

  private get dataDir(): string {
    return this.context.config.dataDir;
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
    if (this.listsEnabled()) {
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
  render(runtime: DaemonRuntime): { script: string | null; counts: Record<string, number> } {
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
    return this.state.get<Record<string, number>>(COUNTS_STATE, {})[`blocklist-${id}`] ?? 0;
  }

  /** Removes filter files the installed configuration no longer names (the rendered ones are never rewritten). */
  removeUnused(runtime: DaemonRuntime): void {
    const installed = join(runtime.dir, 'unbound.conf');
    const text = existsSync(installed) ? readFileSync(installed, 'utf8') : '';
    const script = /python-script:\s*"([^"]+)"/.exec(text)?.[1] ?? '';
    const keep = script ? new Set([basename(script), basename(script).replace(/\.py$/, '.tsv')]) : new Set<string>();
    const dir = join(runtime.dir, 'blocklists');
    if (!existsSync(dir)) return;
    for (const file of readdirSync(dir)) if (!keep.has(file)) rmSync(join(dir, file), { force: true });
  }

  /** Remembers the counts of the filter just installed (see activeNames). */
  installed(counts: Record<string, number>): void {
    this.state.set(COUNTS_STATE, counts);
  }
}
