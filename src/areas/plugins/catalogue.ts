import { isIP } from 'node:net';

/** Hook points a plugin may subscribe to. */
export const HOOK_POINTS = [
  'pre_rule', 'post_rule', 'connection_new', 'connection_established', 'connection_closed', 'log_event', 'api_request',
  'dns_query', 'dns_response', 'dhcp_lease', 'vpn_event', 'timer', 'ids_alert', 'ids_drop',
] as const;

type SettingCheck = (value: unknown) => string | null;

export interface BuiltInPlugin {
  name: string;
  /** The second name the toggle endpoint accepts. */
  key: string;
  version: string;
  description: string;
  author: string;
  hooks: string[];
  defaults: Record<string, unknown>;
  settings: Record<string, SettingCheck>;
  /** Settings that are secrets: sealed at rest, never shown (GET config) nor handed to the plugin's process. */
  writeOnly?: string[];
}

const integer = (min: number, max: number): SettingCheck => (v) => (Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? null : `must be an integer between ${min} and ${max}`);
const boolean: SettingCheck = (v) => (typeof v === 'boolean' ? null : 'must be true or false');
const tableName: SettingCheck = (v) => (typeof v === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,31}$/.test(v) ? null : 'must be a table name (letters, digits, _)');
const ipList: SettingCheck = (v) => (Array.isArray(v) && v.length <= 100_000 && v.every((ip) => typeof ip === 'string' && isIP(ip.split('/')[0]) !== 0) ? null : 'must be a list of IP addresses or CIDRs');
const secret: SettingCheck = (v) => (typeof v === 'string' && v.length <= 1024 ? null : 'must be a string of at most 1024 characters');
const webUrl: SettingCheck = (v) => {
  try {
    const url = new URL(String(v));
    return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'must be an http(s) URL';
  } catch {
    return 'must be an http(s) URL';
  }
};

/** The plugins shipped with the appliance. */
export const BUILT_IN_PLUGINS: BuiltInPlugin[] = [
  {
    name: 'custom-logger', key: 'logging', version: '1.0.0', author: 'Bulwark', description: 'Logs rule matches, connections and log events to a bounded in-memory ring',
    hooks: ['pre_rule', 'post_rule', 'connection_new', 'connection_closed', 'log_event'],
    defaults: { max_entries: 10000 }, settings: { max_entries: integer(100, 1_000_000) },
  },
  {
    name: 'ip-reputation', key: 'ip_reputation', version: '1.0.0', author: 'Bulwark', description: 'Adds known-bad addresses to a packet-filter table',
    hooks: ['pre_rule', 'connection_new'],
    defaults: { table_name: 'ip_reputation', blocklist: [] }, settings: { table_name: tableName, blocklist: ipList },
  },
  {
    name: 'webhook-notifier', key: 'webhook', version: '1.1.0', author: 'Bulwark', description: 'Posts blocked packets, IDS alerts, gateway changes, DNS blocks and DHCP leases to a webhook, signed (through the outbound guard)',
    hooks: ['post_rule', 'ids_alert', 'log_event', 'dns_query', 'dhcp_lease'],
    defaults: {
      url: 'https://localhost:9999/webhook', notify_on_block: true, notify_on_connection: false, notify_on_ids: true, notify_on_gateway: true,
      notify_on_dns_block: false, notify_on_dhcp_lease: false,
    },
    settings: {
      url: webUrl, secret, notify_on_block: boolean, notify_on_connection: boolean, notify_on_ids: boolean, notify_on_gateway: boolean,
      notify_on_dns_block: boolean, notify_on_dhcp_lease: boolean,
    },
    writeOnly: ['secret'],
  },
];

export function findBuiltIn(name: string): BuiltInPlugin | undefined {
  return BUILT_IN_PLUGINS.find((p) => p.name === name || p.key === name);
}

/** Validates settings of a built-in plugin: known keys with the right types (400 text names the key). */
export function checkSettings(plugin: BuiltInPlugin, settings: Record<string, unknown>): string | null {
  for (const [key, value] of Object.entries(settings)) {
    const check = plugin.settings[key];
    if (!check) return `body.settings.${key} is not a setting of ${plugin.name} (known: ${Object.keys(plugin.settings).join(', ')})`;
    const problem = check(value);
    if (problem) return `body.settings.${key} ${problem}`;
  }
  return null;
}

/** A built-in's settings without its write-only ones (what is shown and what its process gets). */
export function shownSettings(plugin: BuiltInPlugin | undefined, settings: Record<string, unknown>): Record<string, unknown> {
  const hidden = new Set(plugin?.writeOnly ?? []);
  return Object.fromEntries(Object.entries(settings).filter(([key]) => !hidden.has(key)));
}
