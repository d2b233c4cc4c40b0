import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { AppContext } from '../../context.js';
import { badRequest, notFound } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { dataPath } from '../common/data-files.js';
import { BUILT_IN_PLUGINS, HOOK_POINTS, checkSettings, findBuiltIn } from './catalogue.js';

const KIND = 'plugin_config';
const MAX_LOG = 500;

export interface Manifest {
  name: string;
  version: string;
  description: string;
  author: string;
  plugin_type: 'native' | 'wasm';
  wasm_file: string | null;
  hooks: string[];
  default_settings: Record<string, unknown>;
}

/** Reads one plugin.toml; null (with the reason) when it is not a valid manifest. */
export function readManifest(text: string): { manifest: Manifest | null; error: string | null } {
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    return { manifest: null, error: `not TOML: ${(error as Error).message.split('\n')[0]}` };
  }
  const section = (raw.plugin as Record<string, unknown> | undefined) ?? raw;
  const name = section.name;
  if (typeof name !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(name)) return { manifest: null, error: 'name is missing or not lower-case letters, digits, - and _' };
  const hooks = Array.isArray(section.hooks) ? section.hooks.map(String) : [];
  const unknown = hooks.find((h) => !(HOOK_POINTS as readonly string[]).includes(h));
  if (unknown) return { manifest: null, error: `unknown hook ${unknown}` };
  const type = section.plugin_type === 'wasm' ? 'wasm' : 'native';
  return {
    manifest: {
      name,
      version: String(section.version ?? '0.0.0'),
      description: String(section.description ?? ''),
      author: String(section.author ?? ''),
      plugin_type: type,
      wasm_file: typeof section.wasm_file === 'string' ? section.wasm_file : null,
      hooks,
      default_settings: (raw.settings as Record<string, unknown> | undefined) ?? (section.default_settings as Record<string, unknown> | undefined) ?? {},
    },
    error: null,
  };
}

/**
 * Plugins: the built-in catalogue with persisted enabled flags and settings, discovery of third-party
 * manifests in the data directory's plugins/ folder (listed, never loaded), and a lifecycle log per plugin.
 */
export class PluginsService {
  private readonly lifecycle = new Map<string, string[]>();

  constructor(private readonly context: AppContext) {}

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
      return { name: plugin.name, version: plugin.version, description: plugin.description, author: plugin.author, state: enabled ? 'running' : 'stopped', hooks: plugin.hooks, built_in: true };
    });
    for (const { manifest } of this.discover().plugins) {
      if (plugins.some((p) => p.name === manifest.name)) continue;
      // Discovered third-party plugins are listed but never loaded into this process.
      plugins.push({ name: manifest.name, version: manifest.version, description: manifest.description, author: manifest.author, state: 'loaded', hooks: manifest.hooks, built_in: false });
    }
    return { plugins, total: plugins.length, running: plugins.filter((p) => p.state === 'running').length };
  }

  private resolve(name: string): { name: string; builtIn: boolean } {
    const builtIn = findBuiltIn(name);
    if (builtIn) return { name: builtIn.name, builtIn: true };
    if (this.discover().plugins.some((p) => p.manifest.name === name)) return { name, builtIn: false };
    throw notFound(`plugin ${name} not found`);
  }

  toggle(name: string, enabled: boolean): { message: string } {
    const plugin = this.resolve(name);
    if (!plugin.builtIn && enabled) throw badRequest(`plugin ${name} was discovered but third-party plugins are not loaded by this appliance`);
    this.save(plugin.name, { enabled });
    this.log(plugin.name, enabled ? 'enabled and running' : 'disabled');
    return { message: enabled ? `Plugin '${plugin.name}' enabled and running.` : `Plugin '${plugin.name}' disabled.` };
  }

  config(name: string) {
    const plugin = this.resolve(name);
    const builtIn = findBuiltIn(plugin.name);
    const discovered = builtIn ? undefined : this.discover().plugins.find((p) => p.manifest.name === plugin.name)?.manifest;
    const defaults = builtIn?.defaults ?? discovered?.default_settings ?? {};
    const stored = this.stored(plugin.name)?.data;
    return { name: plugin.name, enabled: Boolean(stored?.enabled), settings: { ...defaults, ...((stored?.settings as Record<string, unknown> | undefined) ?? {}) } };
  }

  setConfig(name: string, settings: Record<string, unknown>) {
    const plugin = this.resolve(name);
    const builtIn = findBuiltIn(plugin.name);
    if (builtIn) {
      const problem = checkSettings(builtIn, settings);
      if (problem) throw badRequest(problem);
    }
    const current = (this.stored(plugin.name)?.data.settings as Record<string, unknown> | undefined) ?? {};
    this.save(plugin.name, { settings: { ...current, ...settings } });
    this.log(plugin.name, `settings changed: ${Object.keys(settings).join(', ') || '(none)'}`);
    return this.config(plugin.name);
  }

  logs(name: string, lines: number): { name: string; entries: string[] } {
    const plugin = this.resolve(name);
    return { name: plugin.name, entries: [...(this.lifecycle.get(plugin.name) ?? [])].reverse().slice(0, lines) };
  }
}
