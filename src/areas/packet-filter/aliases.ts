/** The /aliases collection (wire-format.md §3.4): typed entries, nesting by `<name>`, no cycles. */
import { Type } from 'typebox';
import { badRequest, conflict } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { Reference } from '../../model/declarations.js';
import type { ModelRegistry } from '../../model/registry.js';
import type { ConfigData, ConfigObject, ConfigStore } from '../../store/config-store.js';
import { parseAddress } from '../../compile/firewall-model.js';
import { pfWordProblem } from '../../compile/pf-names.js';
import type { AliasData, AliasType } from '../../compile/firewall-types.js';
import { ALIAS_NAME, AliasSchema, MAX_ALIAS_ENTRIES, OptionalNullable } from '../../compile/firewall-schemas.js';
import { aliasNameOf, normaliseDescription } from './values.js';

export const ALIAS_KIND = 'alias';
/** Names of the system aliases blocklist plugins feed (never a user's alias). */
export const SYSTEM_PLUGIN_ALIAS_PREFIX = 'sysplugin_';
const RESERVED = new Set(['bruteforce', 'ai_blocked']);
const TYPE_INPUTS: Record<string, AliasType> = { host: 'host', network: 'network', port: 'port', url_table: 'url_table', urltable: 'url_table', url: 'url_table', plugin: 'plugin' };

function requestSchema(create: boolean) {
  return Type.Object({
    name: Type.String(),
    alias_type: Type.String({ description: 'host, network, port, url_table (also urltable, url) or plugin (its one entry names the plugin that feeds it)' }),
    entries: Type.Array(Type.String(), { maxItems: MAX_ALIAS_ENTRIES }),
    description: OptionalNullable(Type.String()),
    enabled: Type.Optional(Type.Boolean()),
    id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
  }, { required: create ? ['name', 'alias_type', 'entries'] : [], additionalProperties: false });
}

/** The body POST /aliases takes (the third-party importer validates with it too). */
export const AliasCreateBody = requestSchema(true);
export const AliasUpdateBody = requestSchema(false);

/** Which alias types may be nested inside which. */
const NESTABLE: Record<AliasType, AliasType[]> = { host: ['host'], network: ['host', 'network', 'url_table', 'plugin'], port: ['port'], url_table: [], plugin: [] };

function normaliseEntry(type: AliasType, raw: string, index: number): string {
  const entry = raw.trim();
  const field = `body.entries.${index}`;
  if (entry.startsWith('<')) {
    if (!aliasNameOf(entry)) throw badRequest(`${field}: "${entry}" is not an alias reference <name>`);
    if (type === 'url_table') throw badRequest(`${field}: a url_table alias holds URLs, not other aliases`);
    if (type === 'plugin') throw badRequest(`${field}: a plugin alias names the plugin that feeds it, not other aliases`);
    return entry;
  }
  switch (type) {
    case 'host': {
      const address = parseAddress(entry);
      if (address?.kind !== 'block' || address.cidr.prefix !== (address.family === 4 ? 32 : 128) || entry.includes('/')) {
        throw badRequest(`${field}: "${entry}" is not an IPv4 or IPv6 host address (use a network alias for CIDRs and ranges)`);
      }
      return entry.toLowerCase();
    }
    case 'network': {
      const address = parseAddress(entry.replace(/\s*-\s*/, '-'));
      if (!address || (address.kind !== 'block' && address.kind !== 'range')) {
        throw badRequest(`${field}: "${entry}" is not an IPv4/IPv6 address, CIDR or range first-last`);
      }
      if (address.kind === 'block' && entry.includes('/') && parseAddress(entry.split('/')[0])?.kind === 'block') {
        const host = parseAddress(entry.split('/')[0]) as { cidr: { base: bigint } };
        if (host.cidr.base !== address.cidr.base) throw badRequest(`${field}: "${entry}" has host bits set`);
      }
      return entry.replace(/\s*-\s*/, '-').toLowerCase();
    }
    case 'port': {
      const match = /^(\d{1,5})(?:[:-](\d{1,5}))?$/.exec(entry);
      const start = match ? Number(match[1]) : NaN;
      const end = match?.[2] !== undefined ? Number(match[2]) : start;
      if (!match || start > 65535 || end > 65535 || start > end) throw badRequest(`${field}: "${entry}" is not a port 0-65535 or a range start:end`);
      return start === end ? String(start) : `${start}:${end}`;
    }
    case 'url_table': {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw badRequest(`${field}: "${entry}" is not a URL`);
      }
      if (url.protocol !== 'https:') throw badRequest(`${field}: url_table sources must be https URLs`);
      return url.toString();
    }
    case 'plugin': {
      if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(entry)) throw badRequest(`${field}: "${entry}" is not a plugin name (lower-case letters, digits, - and _)`);
      return entry;
    }
  }
}

export function toStoredAlias(body: Record<string, unknown>, existing?: ConfigObject): ConfigData {
  const alias: AliasData = existing
    ? structuredClone(existing.data as unknown as AliasData)
    : { name: '', alias_type: 'host', entries: [], description: null, enabled: true };
  if (body.name !== undefined) alias.name = body.name as string;
  if (!ALIAS_NAME.test(alias.name)) throw badRequest('body.name must be 1-31 characters of A-Z, a-z, 0-9, _ and -');
  if (RESERVED.has(alias.name.toLowerCase()) || alias.name.toLowerCase().startsWith(SYSTEM_PLUGIN_ALIAS_PREFIX)) throw badRequest(`body.name "${alias.name}" is reserved`);
  // Refused on every platform, so a configuration moves between Linux and FreeBSD unchanged.
  const pfProblem = pfWordProblem(alias.name);
  if (pfProblem) throw badRequest(`body.name: ${pfProblem} and cannot name a pf table; choose another name`);
  if (body.alias_type !== undefined) {
    const type = TYPE_INPUTS[(body.alias_type as string).toLowerCase()];
    if (!type) throw badRequest('body.alias_type must be one of: host, network, port, url_table, plugin');
    alias.alias_type = type;
  }
  if (body.entries !== undefined || body.alias_type !== undefined) {
    const entries = (body.entries as string[] | undefined) ?? alias.entries;
    alias.entries = entries.map((entry, index) => normaliseEntry(alias.alias_type, entry, index));
    if (alias.alias_type === 'plugin' && alias.entries.length !== 1) throw badRequest('body.entries: a plugin alias has exactly one entry, the name of the plugin that feeds it');
  }
  alias.entries.forEach((entry, index) => {
    if (aliasNameOf(entry) === alias.name) throw badRequest(`body.entries.${index}: an alias cannot contain itself`);
  });
  if (body.description !== undefined) alias.description = normaliseDescription(body.description as string | null);
  if (body.enabled !== undefined) alias.enabled = body.enabled as boolean;
  return alias as unknown as ConfigData;
}

/** A rule or NAT address naming an alias must name an address alias (port aliases are not address sets). */
export function requireAddressAlias(store: ConfigStore, address: string, field: string): void {
  const name = aliasNameOf(address);
  if (!name) return;
  const alias = store.list(ALIAS_KIND).find((a) => a.data.name === name);
  if (alias && alias.data.alias_type === 'port') throw badRequest(`body.${field}: alias "${name}" is a port alias, not an address alias`);
}

/**
 * The alias references and checks shared by rules and NAT: `src_addr` and `dst_addr` may name an address
 * alias (`<name>`); `addresses` reads the two fields from the stored object, wherever its shape keeps them.
 */
export function addressAliasChecks(addresses: (data: ConfigData) => { src_addr: string; dst_addr: string }): {
  references: Reference[];
  check: (data: ConfigData, store: ConfigStore) => void;
} {
  const fields = ['src_addr', 'dst_addr'] as const;
  return {
    references: fields.map((field) => ({
      field, kind: ALIAS_KIND, by: 'name', values: (data: ConfigData) => [aliasNameOf(addresses(data)[field])].filter(Boolean),
    })),
    check: (data, store) => {
      const values = addresses(data);
      for (const field of fields) requireAddressAlias(store, values[field], field);
    },
  };
}

function checkNesting(data: AliasData, existing: ConfigObject | undefined, store: ConfigStore): void {
  const others = new Map(store.list(ALIAS_KIND).filter((a) => a.id !== existing?.id).map((a) => [a.data.name as string, a.data as unknown as AliasData]));
  data.entries.forEach((entry, index) => {
    const name = aliasNameOf(entry);
    if (!name) return;
    const nested = others.get(name);
    if (nested && !NESTABLE[data.alias_type].includes(nested.alias_type)) {
      throw badRequest(`body.entries.${index}: a ${data.alias_type} alias cannot contain the ${nested.alias_type} alias "${name}"`);
    }
  });
  // Depth-first search from this alias over the graph with its new entries.
  const graph = new Map([...others].map(([name, alias]) => [name, alias.entries.map(aliasNameOf).filter((n): n is string => !!n)]));
  graph.set(data.name, data.entries.map(aliasNameOf).filter((n): n is string => !!n));
  const visit = (name: string, path: string[]): void => {
    for (const next of graph.get(name) ?? []) {
      if (next === data.name) throw badRequest(`body.entries: nesting would form a cycle: ${[...path, next].join(' -> ')}`);
      if (!path.includes(next)) visit(next, [...path, next]);
    }
  };
  visit(data.name, [data.name]);
}

/** The alias model: names are unique regardless of case; create and update come from the request form (toStoredAlias). */
export function declareAliases(models: ModelRegistry): CollectionModel {
  return models.collection({
    kind: ALIAS_KIND, noun: 'alias', writeAccess: 'aliases:write',
    schema: AliasSchema,
    unique: [{ field: 'name', caseInsensitive: true }],
    references: [{ field: 'entries', kind: ALIAS_KIND, by: 'name', values: (d) => (d.entries as string[]).map(aliasNameOf).filter(Boolean) }],
    validate: (data, ctx) => {
      const alias = data as unknown as AliasData;
      checkNesting(alias, ctx.existing, ctx.store);
      const previous = ctx.existing?.data as unknown as AliasData | undefined;
      // Renaming, or turning an address alias into a port alias, would break whatever names it.
      if (previous && (previous.name !== alias.name || (previous.alias_type !== 'port') !== (alias.alias_type !== 'port'))) {
        try {
          ctx.assertNotReferenced(ctx.existing!);
        } catch (error) {
          throw conflict(`alias "${previous.name}" cannot be renamed or change between address and port type while in use: ${(error as Error).message}`);
        }
      }
    },
  });
}
