import { parse as parseToml } from 'smol-toml';
import { Ajv } from 'ajv';
import { isPermission, type Permission } from '../../core/permissions.js';
import { HOOK_POINTS } from './catalogue.js';

/** A plugin's `plugin.toml`: who it is, what it listens to, what it may call, and the shape of its settings. */
export interface Manifest {
  name: string;
  version: string;
  description: string;
  author: string;
  plugin_type: 'native' | 'wasm';
  wasm_file: string | null;
  hooks: string[];
  default_settings: Record<string, unknown>;
  /** The program Bulwark runs with Node (a path inside the plugin directory); null: the plugin cannot be run. */
  entry: string | null;
  /** The API permissions the plugin asks for; its key holds these ∩ what the enabler holds. */
  permissions: Permission[];
  /** A JSON schema its settings are validated against (PUT …/config); null accepts any object. */
  settings_schema: Record<string, unknown> | null;
  /** How often the `timer` hook fires. */
  timer_seconds: number;
  /** A built-in's blocklist kept by itself: Bulwark adds a system alias the plugin feeds and a system rule dropping it. Ignored for third-party plugins. */
  system_blocklist: boolean;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const ENTRY = /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._/-]{1,200}$/;
const schemaChecker = new Ajv({ strict: false });

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
  if (typeof name !== 'string' || !NAME.test(name)) return { manifest: null, error: 'name is missing or not lower-case letters, digits, - and _' };
  const hooks = Array.isArray(section.hooks) ? section.hooks.map(String) : [];
  const unknown = hooks.find((h) => !(HOOK_POINTS as readonly string[]).includes(h));
  if (unknown) return { manifest: null, error: `unknown hook ${unknown}` };
  const permissions = Array.isArray(section.permissions) ? section.permissions.map(String) : [];
  const badPermission = permissions.find((p) => !isPermission(p));
  if (badPermission) return { manifest: null, error: `unknown permission ${badPermission}` };
  const entry = section.entry;
  if (entry !== undefined && (typeof entry !== 'string' || !ENTRY.test(entry))) return { manifest: null, error: 'entry must be a relative path inside the plugin directory' };
  const schema = raw.settings_schema ?? section.settings_schema;
  if (schema !== undefined) {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { manifest: null, error: 'settings_schema must be a table (a JSON schema)' };
    try {
      schemaChecker.compile(schema);
    } catch (error) {
      return { manifest: null, error: `settings_schema is not a JSON schema: ${(error as Error).message}` };
    }
  }
  const timer = section.timer_seconds ?? 60;
  if (!Number.isInteger(timer) || (timer as number) < 1 || (timer as number) > 86_400) return { manifest: null, error: 'timer_seconds must be an integer between 1 and 86400' };
  return {
    manifest: {
      name,
      version: String(section.version ?? '0.0.0'),
      description: String(section.description ?? ''),
      author: String(section.author ?? ''),
      plugin_type: section.plugin_type === 'wasm' ? 'wasm' : 'native',
      wasm_file: typeof section.wasm_file === 'string' ? section.wasm_file : null,
      hooks,
      default_settings: (raw.settings as Record<string, unknown> | undefined) ?? (section.default_settings as Record<string, unknown> | undefined) ?? {},
      entry: typeof entry === 'string' ? entry : null,
      permissions: permissions as Permission[],
      settings_schema: (schema as Record<string, unknown> | undefined) ?? null,
      timer_seconds: timer as number,
      system_blocklist: section.system_blocklist === true,
    },
    error: null,
  };
}

/** Checks settings against the manifest's schema; the problem (naming the field) or null. */
export function settingsProblem(manifest: Manifest, settings: Record<string, unknown>): string | null {
  if (!manifest.settings_schema) return null;
  const validate = schemaChecker.compile(manifest.settings_schema);
  if (validate(settings)) return null;
  const error = validate.errors?.[0];
  const at = error?.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : '';
  return `body.settings${at ? `.${at}` : ''} ${error?.message ?? 'does not match the plugin schema'}`;
}
