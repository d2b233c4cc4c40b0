import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { badRequest, conflict, forbidden, HttpError, notFound, unavailable } from '../../core/errors.js';
import { parseAddress } from '../../compile/firewall-model.js';
import { isoTime } from '../../core/clock.js';
import type { Permission } from '../../core/permissions.js';
import type { Identity } from '../../http/access.js';
import { dataPath } from '../common/data-files.js';
import { BUILT_IN_PLUGINS, checkSettings, findBuiltIn, shownSettings } from './catalogue.js';
import { PluginDeliveries } from './deliveries.js';
import { readManifest, settingsProblem, type Manifest } from './manifest.js';
import { PluginHost, pluginKeyName } from './host.js';
import type { PluginFindings, ProvidedFindingEntry } from '../packet-filter/plugin-findings.js';

export { readManifest, type Manifest } from './manifest.js';

/** What feeds `plugin` aliases into the packet filter (the packet-filter area's service). */
export interface AliasFeeder {
  feedPluginAliases(plugin: string, entries: string[]): Promise<{ aliases: string[]; outcome: FeedOutcome }>;
  usePluginBlocklist(plugin: string, on: boolean): Promise<FeedOutcome>;
}
type FeedOutcome = { ok: true } | { ok: false; status: 409 | 503; error: string } | null;

/** The built-in plugins' programs (ip-reputation): `plugins/<name>/` of the release (and of the repository). */
const BUILT_IN_PROGRAMS = fileURLToPath(new URL('../../../plugins/', import.meta.url));


const KIND = 'plugin_config';
const MAX_LOG = 500;

/**
 * Plugins: the built-in catalogue with persisted enabled flags and settings, discovery of third-party
 * manifests in the data directory's plugins/ folder, and a log per plugin (lifecycle and the plugin's own output).
 * An enabled third-party plugin runs as its own process (PluginHost); it is started again when Bulwark starts.
 */
export class PluginsService {
  private readonly lifecycle = new Map<string, string[]>();
  readonly host: PluginHost;
  readonly deliveries: PluginDeliveries;

  constructor(
    private readonly context: AppContext,
    private readonly aliases?: AliasFeeder,
    /** Where a plugin's findings about rules go (the packet-filter area's, shown by GET /rules/analysis). */
    private readonly findings?: PluginFindings,
  ) {
    this.host = new PluginHost(context, (name, line) => this.log(name, line));
    this.deliveries = new PluginDeliveries(context, (name, line) => this.log(name, line));
  }

  /** Attaches the host to the server and starts every enabled third-party plugin (a failure is logged, not fatal). */
  async start(app: FastifyInstance): Promise<void> {
    this.host.attach(app);
    const builtIns = BUILT_IN_PLUGINS.map((p) => this.builtInProgram(p.name)).filter((p) => p !== null);
    for (const found of [...builtIns, ...this.discover().plugins.filter((p) => !findBuiltIn(p.manifest.name))]) {
      const stored = this.stored(found.manifest.name)?.data;
      if (!stored?.enabled) continue;
      try {
        await this.launch(found, stored);
        this.log(found.manifest.name, 'started with Bulwark');
      } catch (error) {
        this.log(found.manifest.name, `could not be started: ${(error as Error).message}`);
      }
    }
  }

  /** The program of a built-in plugin (plugins/<name>/ of the release), when it ships one. */
  private builtInProgram(name: string): { manifest: Manifest; path: string } | null {
    const path = join(BUILT_IN_PROGRAMS, name);
    if (!existsSync(join(path, 'plugin.toml'))) return null;
    const { manifest } = readManifest(readFileSync(join(path, 'plugin.toml'), 'utf8'));
    return manifest && { manifest, path };
  }

  /** Starts a plugin's process; a built-in's system blocklist is put in force first (its process feeds it). */
  private async launch(found: { manifest: Manifest; path: string }, stored: Record<string, unknown>): Promise<void> {
    const builtIn = findBuiltIn(found.manifest.name);
    if (builtIn && found.manifest.system_blocklist) {
      if (!this.aliases) throw new Error('the packet filter is not part of this appliance');
      const outcome = await this.aliases.usePluginBlocklist(found.manifest.name, true);
      if (outcome && !outcome.ok) throw new Error(outcome.error);
    }
    await this.host.start(this.launchOf(found.manifest, found.path, stored, builtIn?.defaults));
  }

  /** Stops a plugin's process; what it fed is no longer in force (its aliases empty, its system blocklist gone). */
  private async halt(name: string): Promise<void> {
    await this.host.stop(name);
    if (findBuiltIn(name) && this.builtInProgram(name)?.manifest.system_blocklist) await this.aliases?.usePluginBlocklist(name, false);
    await this.aliases?.feedPluginAliases(name, []);
    this.findings?.remove(name);
  }

  private launchOf(manifest: Manifest, dir: string, stored: Record<string, unknown>, defaults = manifest.default_settings) {
    return {
      manifest,
      dir,
      settings: shownSettings(findBuiltIn(manifest.name), { ...defaults, ...((stored.settings as Record<string, unknown> | undefined) ?? {}) }),
      permissions: (stored.granted as Permission[] | undefined) ?? [],
      ownerId: String(stored.enabled_by ?? ''),
    };
  }

  get pluginDir(): string {
    return dataPath(this.context.config.dataDir, 'plugins');
  }

  private stored(name: string) {
    return this.context.store.list(KIND).find((o) => o.data.name === name);
  }

  private save(name: string, patch: Record<string, unknown>): void {
    const { store } = this.context;
    const existing = this.stored(name);
    const data = { name, enabled: false, settings: {}, ...(existing?.data ?? {}), ...patch };
    if (existing) store.update(KIND, existing.id, data);
    else store.insert(KIND, data);
  }

  private log(name: string, message: string): void {
    const lines = this.lifecycle.get(name) ?? [];
    lines.push(`${isoTime(this.context.clock.now())} ${name}: ${message}`);
    if (lines.length > MAX_LOG) lines.splice(0, lines.length - MAX_LOG);
    this.lifecycle.set(name, lines);
  }

  discover(): { plugins: { manifest: Manifest; path: string; installed: boolean }[]; plugin_dir: string; invalid: { path: string; error: string }[] } {
    const dir = this.pluginDir;
    const plugins: { manifest: Manifest; path: string; installed: boolean }[] = [];
    const invalid: { path: string; error: string }[] = [];
    if (existsSync(dir)) {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = join(dir, entry.name);
        const file = join(path, 'plugin.toml');
        if (!existsSync(file)) continue;
        const { manifest, error } = readManifest(readFileSync(file, 'utf8'));
        if (manifest) plugins.push({ manifest, path, installed: true });
        else invalid.push({ path, error: error! });
      }
    }
    return { plugins, plugin_dir: dir, invalid };
  }

  list() {
    const plugins = BUILT_IN_PLUGINS.map((plugin) => {
      const enabled = Boolean(this.stored(plugin.name)?.data.enabled);
      const program = this.builtInProgram(plugin.name);
      // A built-in whose program is missing from the release still shows its stored flag.
      const state = !program ? (enabled ? 'running' : 'stopped') : this.host.isRunning(plugin.name) ? 'running' : enabled ? 'restarting' : 'stopped';
      const about = program?.manifest ?? plugin;
      return { name: plugin.name, version: about.version, description: about.description, author: about.author, state, hooks: about.hooks, built_in: true };
    });
    for (const { manifest } of this.discover().plugins) {
      if (plugins.some((p) => p.name === manifest.name)) continue;
      const enabled = Boolean(this.stored(manifest.name)?.data.enabled);
      // Enabled but not alive: it died and waits for its restart (or could not be started; its log says why).
      const state = this.host.isRunning(manifest.name) ? 'running' : enabled ? 'restarting' : 'stopped';
      plugins.push({ name: manifest.name, version: manifest.version, description: manifest.description, author: manifest.author, state, hooks: manifest.hooks, built_in: false });
    }
    return { plugins, total: plugins.length, running: plugins.filter((p) => p.state === 'running').length };
  }

  private resolve(name: string): { name: string; builtIn: boolean } {
    const builtIn = findBuiltIn(name);
    if (builtIn) return { name: builtIn.name, builtIn: true };
    if (this.discover().plugins.some((p) => p.manifest.name === name)) return { name, builtIn: false };
    throw notFound(`plugin ${name} not found`);
  }

  async toggle(name: string, enabled: boolean, enabler: Identity): Promise<{ message: string }> {
    const plugin = this.resolve(name);
    const program = plugin.builtIn ? this.builtInProgram(plugin.name) : this.discover().plugins.find((p) => p.manifest.name === plugin.name)!;
    if (program) return this.toggleProgram(plugin.name, program, enabled, enabler);
    this.save(plugin.name, { enabled });
    this.log(plugin.name, enabled ? 'enabled and running' : 'disabled');
    return { message: enabled ? `Plugin '${plugin.name}' enabled and running.` : `Plugin '${plugin.name}' disabled.` };
  }

  /**
   * Enabling runs the plugin with a key holding what its manifest asks for and the enabler holds (never more than
   * the person who turned it on could do); a plugin that cannot start is left disabled (409 with the reason).
   */
  private async toggleProgram(name: string, found: { manifest: Manifest; path: string }, enabled: boolean, enabler: Identity): Promise<{ message: string }> {
    if (!enabled) {
      await this.halt(name);
      this.save(name, { enabled: false });
      this.log(name, 'disabled and stopped');
      return { message: `Plugin '${name}' disabled.` };
    }
    if (found.manifest.plugin_type === 'wasm' || !found.manifest.entry) throw badRequest(`plugin ${name} has no entry program (plugin.entry); only Node programs are run (WebAssembly plugins are not supported)`);
    if (!existsSync(join(found.path, found.manifest.entry))) throw badRequest(`plugin ${name}: its entry ${found.manifest.entry} does not exist`);
    const granted = found.manifest.permissions.filter((p) => enabler.permissions.has(p));
    const withheld = found.manifest.permissions.filter((p) => !enabler.permissions.has(p));
    const stored = { ...(this.stored(name)?.data ?? {}), granted, enabled_by: enabler.userId };
    try {
      await this.launch(found, stored);
    } catch (error) {
      await this.halt(name);
      this.log(name, `could not be started: ${(error as Error).message}`);
      throw conflict(`plugin ${name} could not be started: ${(error as Error).message}`);
    }
    this.save(name, { enabled: true, granted, enabled_by: enabler.userId });
    this.log(name, `enabled and running with ${granted.join(', ') || 'no permissions'}${withheld.length ? ` (withheld, the enabler lacks them: ${withheld.join(', ')})` : ''}`);
    return { message: `Plugin '${name}' enabled and running.` };
  }

  config(name: string) {
    const plugin = this.resolve(name);
    return { name: plugin.name, enabled: Boolean(this.stored(plugin.name)?.data.enabled), settings: shownSettings(findBuiltIn(plugin.name), this.allSettings(plugin.name)) };
  }

  /** A plugin's defaults merged with its stored settings, write-only ones (sealed) included. */
  private allSettings(name: string): Record<string, unknown> {
    const builtIn = findBuiltIn(name);
    const discovered = builtIn ? undefined : this.discover().plugins.find((p) => p.manifest.name === name)?.manifest;
    const defaults = builtIn?.defaults ?? discovered?.default_settings ?? {};
    return { ...defaults, ...((this.stored(name)?.data.settings as Record<string, unknown> | undefined) ?? {}) };
  }

  setConfig(name: string, settings: Record<string, unknown>) {
    const plugin = this.resolve(name);
    const builtIn = findBuiltIn(plugin.name);
    const current = (this.stored(plugin.name)?.data.settings as Record<string, unknown> | undefined) ?? {};
    if (builtIn) {
      const problem = checkSettings(builtIn, settings) ?? this.deliveries.settingsProblem(settings);
      if (problem) throw badRequest(problem);
      // Secrets are sealed at rest ('' clears one).
      for (const key of builtIn.writeOnly ?? []) {
        if (typeof settings[key] === 'string' && settings[key] !== '') settings = { ...settings, [key]: this.context.sealer.seal(settings[key]) };
      }
    } else {
      const manifest = this.discover().plugins.find((p) => p.manifest.name === plugin.name)!.manifest;
      const problem = settingsProblem(manifest, { ...manifest.default_settings, ...current, ...settings });
      if (problem) throw badRequest(problem);
    }
    this.save(plugin.name, { settings: { ...current, ...settings } });
    this.log(plugin.name, `settings changed: ${Object.keys(settings).join(', ') || '(none)'}`);
    const config = this.config(plugin.name);
    this.host.pushSettings(plugin.name, config.settings);
    return config;
  }

  /** The plugin `name` names, when the caller is that plugin's own key (403 otherwise: `what` only it may do). */
  private ownPlugin(name: string, caller: Identity, what: string): { name: string; builtIn: boolean } {
    const plugin = this.resolve(name);
    const key = caller.credential === 'api_key' ? this.context.identity.apiKeys.liveById(caller.credentialId) : undefined;
    if (key?.name !== pluginKeyName(plugin.name)) throw forbidden(`only plugin ${plugin.name} itself ${what}`);
    return plugin;
  }

  /**
   * A plugin's outbound post: the event it sends goes to the `url` of its own settings, signed with its sealed
   * `secret`, through the outbound guard, with retries (PluginDeliveries). Only the plugin's own key may ask.
   */
  deliver(name: string, event: { hook: string; topic: string; at: string; payload: Record<string, unknown> }, caller: Identity) {
    const plugin = this.ownPlugin(name, caller, 'posts through its webhook');
    return this.deliveries.post(plugin.name, this.allSettings(plugin.name), event);
  }

  /** A plugin's provider feed: only the plugin's own key may feed the aliases that name it; each entry an address. */
  async feedAliases(name: string, entries: string[], caller: Identity) {
    const plugin = this.ownPlugin(name, caller, 'feeds its aliases');
    entries.forEach((entry, index) => {
      const address = parseAddress(entry.trim());
      if (address?.kind !== 'block' && address?.kind !== 'range') throw badRequest(`body.entries.${index}: "${entry}" is not an address, CIDR or range`);
    });
    if (!this.aliases) throw unavailable('the packet filter is not part of this appliance');
    const { aliases, outcome } = await this.aliases.feedPluginAliases(plugin.name, entries.map((e) => e.trim()));
    if (outcome && !outcome.ok) throw new HttpError(outcome.status, outcome.error);
    this.log(plugin.name, `fed ${entries.length} address(es) to ${aliases.join(', ') || 'no alias yet'}`);
    return { name: plugin.name, entries: entries.length, aliases, applied: outcome !== null };
  }

  /** A plugin's findings provider: only the plugin's own key may replace its findings in GET /rules/analysis. */
  provideFindings(name: string, findings: ProvidedFindingEntry[], caller: Identity) {
    const plugin = this.ownPlugin(name, caller, 'provides its findings');
    if (!this.findings) throw unavailable('the packet filter is not part of this appliance');
    const count = this.findings.replace(plugin.name, findings);
    this.log(plugin.name, `provided ${count} finding(s) to /rules/analysis`);
    return { name: plugin.name, findings: count };
  }

  logs(name: string, lines: number): { name: string; entries: string[] } {
    const plugin = this.resolve(name);
    return { name: plugin.name, entries: [...(this.lifecycle.get(plugin.name) ?? [])].reverse().slice(0, lines) };
  }
}
