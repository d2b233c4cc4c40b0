/**
 * Property test: no value written through the API becomes a directive in unbound.conf (and its blocklist filter data),
 * kea-dhcp4.conf or chrony.conf. Every string field of every DNS, DHCP and time object is enumerated from its
 * schema; each one gets hostile values (quotes, newlines, CR, NUL, braces, semicolons, `include:` …). A write
 * must answer 400, or the apply must refuse to render it (409), or the rendered files must have exactly the
 * structure they had with harmless values (same directives, same number of tokens per line; for Kea the same
 * JSON shape). A string field that is neither exercised here nor listed as not rendered fails the test.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TSchema } from 'typebox';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { BlocklistSchedule, BlocklistSource, DomainOverride, HostOverride, PatternEntry, ResolverAcl, ResolverConfig } from '../../src/areas/dns/schema.js';
import { DhcpConfig, DhcpDdns, DhcpHaConfig, Reservation, Subnet } from '../../src/areas/dhcp/schema.js';
import { TimeConfig, TimeSource } from '../../src/areas/time/schema.js';
import { renderBlocklistData, renderBlocklistFilter } from '../../src/render/unbound/unbound-blocklist.js';
import { RenderRefusal } from '../../src/render/refusal.js';
import { runtimeRoot } from '../../src/platform/daemon-runtime.js';

const HOSTILE = [
  '"', "'", '\n', '\r', '\u0000', '{', '}', ';', '#', '\\',
  'x\\', 'include: "/etc/passwd"', '"; include "x', 'a\ninclude: /etc/passwd', 'a\rinclude: /etc/passwd',
  '1.2.3.4\ninclude: /etc/passwd', '1.2.3.4 include: /etc/passwd', 'example.com"; include: "/etc/passwd',
  "example.com' include: '/etc/passwd", 'x }\nserver:\n  include: /etc/passwd', '/tmp/x\ninclude /etc/shadow',
  'a"},"Dhcp4":{"x":"', 'a # b', 'server:',
];

type Area = 'dns' | 'dhcp' | 'time';

interface Target {
  name: string;
  area: Area;
  schema: TSchema;
  path: string;
  shape: 'singleton' | 'collection';
  /** Collections without update: each attempt creates (and then deletes) an object. */
  createOnly?: boolean;
  base: Record<string, unknown>;
  /** Per field, extra values that make the field reach the rendered file (e.g. dot_upstream needs dot_enabled). */
  reach?: Record<string, Record<string, unknown>>;
  /** Fields whose text is itself a list of directives: hostile text is appended to harmless text, never alone. */
  appendOnly?: string[];
  /** String fields that never reach a rendered file, with the reason. */
  notRendered: Record<string, string>;
}

const TARGETS: Target[] = [
  {
    name: 'dns resolver config', area: 'dns', schema: ResolverConfig, path: '/api/v1/dns/resolver/config', shape: 'singleton',
    base: {
      enabled: true, listen_interfaces: ['127.0.0.1'], port: 15353, outgoing_interface: '127.0.0.1', dhcp_domain: 'lan.example',
      private_addresses: ['10.0.0.0/8'], forwarding_servers: ['192.0.2.53'], dot_upstream: ['192.0.2.53@853#dns.example'],
      msg_cache_size: '8m', rrset_cache_size: '16m', custom_options: 'edns-buffer-size: 1232',
    },
    reach: { dot_upstream: { dot_enabled: true } },
    appendOnly: ['custom_options'],
    notRendered: {
      backend: 'an enum that selects the renderer',
      blocklist_urls: 'legacy field: blocklists are rendered from /dns/blocklists',
      whitelist: 'legacy field: the whitelist is rendered from /dns/whitelist',
      blocklist_action: 'legacy field',
      blocklist_redirect_ip: 'legacy field',
    },
  },
  {
    name: 'dns host override', area: 'dns', schema: HostOverride, path: '/api/v1/dns/resolver/hosts', shape: 'collection',
    base: { hostname: 'txt', domain: 'home.lan', record_type: 'TXT', value: 'hello world' },
    notRendered: { description: 'a note for people' },
  },
  {
    name: 'dns domain override', area: 'dns', schema: DomainOverride, path: '/api/v1/dns/resolver/domains', shape: 'collection',
    base: { domain: 'corp.example', server: '192.0.2.10:5353' },
    notRendered: { description: 'a note for people' },
  },
  {
    name: 'dns acl', area: 'dns', schema: ResolverAcl, path: '/api/v1/dns/resolver/acls', shape: 'collection',
    base: { network: '192.0.2.0/24', action: 'allow' },
    notRendered: { description: 'a note for people' },
  },
  {
    name: 'dns whitelist', area: 'dns', schema: PatternEntry, path: '/api/v1/dns/whitelist', shape: 'collection', createOnly: true,
    base: { pattern: 'good.example.com' },
    notRendered: { note: 'a note for people' },
  },
  {
    name: 'dns custom block', area: 'dns', schema: PatternEntry, path: '/api/v1/dns/customblocks', shape: 'collection', createOnly: true,
    base: { pattern: 'ads.example.com' },
    notRendered: { note: 'a note for people' },
  },
  {
    name: 'dns blocklist source', area: 'dns', schema: BlocklistSource, path: '/api/v1/dns/blocklists', shape: 'collection',
    base: { name: 'Mirror', category: 'ads', url: 'https://lists.example/hosts.txt', format: 'domains', enabled: false },
    notRendered: {
      name: 'the filter names the source by its id, not its name',
      category: 'a label for people',
      url: 'downloaded by Bulwark (outbound guard), never rendered',
      format: 'selects the parser of the download',
      action: 'an enum the filter knows',
      redirect_ip: 'rendered only with a downloaded list: covered by "the blocklist renderer refuses …" below',
    },
  },
  {
    name: 'dns blocklist schedule', area: 'dns', schema: BlocklistSchedule, path: '/api/v1/dns/blocklists/schedule', shape: 'singleton',
    base: {},
    notRendered: { cron: 'read by Bulwark\'s scheduler', allow_private_sources: 'read by the outbound guard' },
  },
  {
    name: 'dhcp config', area: 'dhcp', schema: DhcpConfig, path: '/api/v1/dhcp/v4/config', shape: 'singleton',
    base: {
      interfaces: ['eth1'], dns_servers: ['192.0.2.1'], domain_name: 'lan.example', domain_search: ['lan.example'],
      ntp_servers: ['192.0.2.1'], wins_servers: ['192.0.2.1'], next_server: '192.0.2.5', boot_filename: 'pxelinux.0',
    },
    notRendered: { log_format: 'an enum for Bulwark\'s log view' },
  },
  {
    name: 'dhcp subnet', area: 'dhcp', schema: Subnet, path: '/api/v1/dhcp/v4/subnets', shape: 'collection',
    base: {
      network: '192.168.60.0/24', pool_start: '192.168.60.100', pool_end: '192.168.60.199', gateway: '192.168.60.1',
      dns_servers: ['192.168.60.1'], domain_name: 'sub.example', trusted_relays: ['192.0.2.7'], ntp_servers: ['192.168.60.1'],
      options: [{ code: 224, value_type: 'string', value: 'hello' }],
    },
    notRendered: { description: 'a note for people' },
  },
  {
    name: 'dhcp reservation', area: 'dhcp', schema: Reservation, path: '/api/v1/dhcp/v4/reservations', shape: 'collection',
    base: { mac_address: '02:00:00:00:00:01', ip_address: '192.168.60.10', hostname: 'host1' },
    reach: { client_id: { mac_address: '' } },
    notRendered: {
      subnet_id: 'a reference (uuid) that only selects the subnet',
      description: 'a note for people',
    },
  },
  {
    name: 'dhcp ddns', area: 'dhcp', schema: DhcpDdns, path: '/api/v1/dhcp/ddns', shape: 'singleton',
    base: { enabled: true, forward_zone: 'lan.example', reverse_zone_v4: '2.0.192.in-addr.arpa', dns_server: '192.0.2.53', tsig_key: 'k1.lan.example', tsig_secret: 'c2VjcmV0LXRzaWc=' },
    notRendered: { reverse_zone_v6: 'DHCPv6 only: not rendered' },
  },
  {
    name: 'dhcp ha', area: 'dhcp', schema: DhcpHaConfig, path: '/api/v1/dhcp/ha/config', shape: 'singleton',
    base: { mode: 'hot-standby', peer: '192.0.2.2:8001', listen: '192.0.2.1:8000' },
    notRendered: {
      peers: 'not rendered (one partner: peer)', tls_cert: 'not rendered (peers talk plain HTTP)', tls_key: 'not rendered', tls_ca: 'not rendered',
    },
  },
  {
    name: 'time config', area: 'time', schema: TimeConfig, path: '/api/v1/time/config', shape: 'singleton',
    base: { ntp_listen: '127.0.0.1:10123', nts_ke_listen: '127.0.0.1:14460' },
    // Filled in before(): NTS fields reach chrony.conf only with NTS on and both files named.
    reach: {},
    notRendered: {
      log_level: 'an enum for Bulwark\'s log view',
      ntp_interfaces: 'stored for the UI; chrony serves on ntp_listen',
      ptp_interface: 'PTP (linuxptp) is not rendered', ptp_transport: 'not rendered', ptp_delay_mechanism: 'not rendered',
      metrics_listen: 'not rendered into chrony.conf', management_listen: 'not rendered into chrony.conf',
    },
  },
  {
    name: 'time source', area: 'time', schema: TimeSource, path: '/api/v1/time/sources', shape: 'collection',
    base: { address: '192.0.2.123', min_poll: 4, max_poll: 8 },
    notRendered: {},
  },
];

/** Paths of every string slot in a schema: `field`, `list.0`, `objects.0.field` (unions and nullables included). */
function stringFields(schema: Record<string, unknown>, prefix = ''): string[] {
  if (schema.type === 'string') return [prefix];
  if (Array.isArray(schema.anyOf)) return [...new Set((schema.anyOf as Record<string, unknown>[]).flatMap((member) => stringFields(member, prefix)))];
  if (schema.type === 'array') return stringFields(schema.items as Record<string, unknown>, `${prefix}.0`);
  if (schema.type === 'object') {
    return Object.entries(schema.properties as Record<string, Record<string, unknown>>).flatMap(([key, child]) => stringFields(child, prefix ? `${prefix}.${key}` : key));
  }
  return [];
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const [index, part] of parts.slice(0, -1).entries()) {
    if (node[part] === undefined || node[part] === null) node[part] = /^\d+$/.test(parts[index + 1]) ? [] : {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]] = value;
}

function getPath(target: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], target);
}

// ---- structure of rendered files ----

/** Unbound's lexer, per line: bare words, "double" and 'single' quoted strings (no escapes), # comments. */
function unboundTokens(line: string, where: string): { text: string; bare: boolean }[] {
  const tokens: { text: string; bare: boolean }[] = [];
  let i = 0;
  while (i < line.length) {
    const char = line[i];
    if (char === ' ' || char === '\t') {
      i++;
    } else if (char === '#') {
      break;
    } else if (char === '"' || char === "'") {
      const end = line.indexOf(char, i + 1);
      assert.ok(end > 0, `${where}: unterminated quoted string`);
      tokens.push({ text: line.slice(i, end + 1), bare: false });
      i = end + 1;
    } else {
      let j = i;
      while (j < line.length && !/[\s"']/.test(line[j])) j += line[j] === '\\' ? 2 : 1;
      tokens.push({ text: line.slice(i, j), bare: true });
      i = j;
    }
  }
  return tokens;
}

/** One entry per directive line: its keyword(s) and token count. */
function unboundStructure(text: string, file: string): string[] {
  assert.doesNotMatch(text, /[\r\0]/, `${file}: CR or NUL in the rendered file`);
  return text.split('\n').flatMap((line, index) => {
    const tokens = unboundTokens(line, `${file}:${index + 1}`);
    if (tokens.length === 0) return [];
    const keywords = tokens.filter((t) => t.bare && /^[A-Za-z0-9_-]+:$/.test(t.text)).map((t) => t.text);
    return [`${keywords.join(' ')}/${tokens.length}`];
  });
}

/** The blocklist filter's data: the kind and field count of each line; names never hold a tab, quote or space. */
function filterStructure(text: string, file: string): string[] {
  const lines = text.split('\n').filter((l) => l && !l.startsWith('#'));
  for (const line of lines) assert.doesNotMatch(line, /[\r\0"'\\ ]/, `${file}: a quote, backslash, space, CR or NUL in the filter data`);
  return lines.map((l) => `${/^\d+$/.test(l.split('\t')[0]) ? 'block' : l.split('\t')[0]}/${l.split('\t').length}`);
}

function chronyStructure(text: string): string[] {
  assert.doesNotMatch(text, /[\r\0"'\\]/, 'chrony.conf holds a quote, backslash, CR or NUL');
  return text.split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => `${l.trim().split(/\s+/)[0]}/${l.trim().split(/\s+/).length}`);
}

/** The JSON shape: keys and types, array lengths, no values. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, shape(v)]));
  return typeof value;
}

let t: AreaApp;
const ids = new Map<string, string>();

const APPLY: Record<Area, string> = { dns: '/api/v1/dns/resolver/apply', dhcp: '/api/v1/dhcp/v4/apply', time: '/api/v1/time/apply' };

function structure(area: Area): unknown {
  if (area === 'dns') {
    const dir = join(t.dataDir, 'dns');
    const filters = join(dir, 'blocklists');
    const data = existsSync(filters) ? readdirSync(filters).filter((f) => f.endsWith('.tsv')).map((f) => join('blocklists', f)) : [];
    return [
      ['unbound.conf', unboundStructure(readFileSync(join(dir, 'unbound.conf'), 'utf8'), 'unbound.conf')],
      ...data.map((file) => ['blocklist data', filterStructure(readFileSync(join(dir, file), 'utf8'), file)]),
    ];
  }
  if (area === 'dhcp') {
    const ddns = join(t.dataDir, 'dhcp', 'kea-dhcp-ddns.conf');
    return [shape(JSON.parse(readFileSync(join(t.dataDir, 'dhcp', 'kea-dhcp4.conf'), 'utf8'))), existsSync(ddns) ? shape(JSON.parse(readFileSync(ddns, 'utf8'))) : null];
  }
  return chronyStructure(readFileSync(join(t.dataDir, 'time', 'chrony.conf'), 'utf8'));
}

async function apply(area: Area): Promise<{ status: number; error?: string }> {
  const response = await t.request('POST', APPLY[area]);
  return { status: response.statusCode, error: response.statusCode === 200 ? undefined : json(response).error };
}

const baseline = new Map<Area, unknown>();

before(async () => {
  t = await startAreaApp();
  // NTS key files the administrator placed in the key folder (chronyd -p only parses the paths).
  const keys = join(t.dataDir, 'time', 'keys');
  mkdirSync(keys, { recursive: true });
  writeFileSync(join(keys, 'server.crt'), 'certificate');
  writeFileSync(join(keys, 'server.key'), 'key');
  const nts = { nts_enabled: true, nts_certificate: join(keys, 'server.crt'), nts_private_key: join(keys, 'server.key') };
  TARGETS.find((target) => target.name === 'time config')!.reach = { nts_certificate: nts, nts_private_key: nts, nts_ke_listen: nts };
  for (const target of TARGETS) {
    if (target.shape === 'singleton') {
      const response = await t.request('PUT', target.path, target.base);
      assert.equal(response.statusCode, 200, `${target.name}: ${response.body}`);
    } else if (!target.createOnly) {
      const response = await t.request('POST', target.path, target.base);
      assert.equal(response.statusCode, 201, `${target.name}: ${response.body}`);
      ids.set(target.name, json(response).id);
    }
  }
  // One custom block, so the blocklist filter exists and host/domain names reach its allow-list.
  assert.equal((await t.request('POST', '/api/v1/dns/customblocks', { pattern: 'baseline.example.com' })).statusCode, 201);
  for (const area of ['dns', 'dhcp', 'time'] as const) {
    const applied = await apply(area);
    assert.equal(applied.status, 200, `${area}: ${applied.error}`);
    baseline.set(area, structure(area));
  }
});
after(() => t.close());

/** Exported object schemas that are answers only (nothing writes them), or written elsewhere. */
const NOT_WRITTEN = new Set([
  'SystemDns', // PUT /dns: rendered into resolv.conf (not one of these daemons' files); servers must be IP addresses
  'Enabled', 'RefreshOutcome', 'ApplyReport', 'ResolverStatus', 'DnsStats', // dns answers
  'SubnetOption', // part of Subnet (its value is exercised as options.0.value)
  'Lease', 'PoolStats', 'HaStatus', 'DhcpStatus', 'DhcpActionResult', // dhcp answers
  'TimeStatus', 'TimeActionResult', // time answers
]);

test('every object schema of the DNS, DHCP and time areas is a target here or an answer; every listed field exists', async () => {
  const modules = [await import('../../src/areas/dns/schema.js'), await import('../../src/areas/dhcp/schema.js'), await import('../../src/areas/time/schema.js')];
  const targeted = new Set(TARGETS.map((target) => target.schema));
  for (const module of modules) {
    for (const [name, value] of Object.entries(module)) {
      if (!value || typeof value !== 'object' || (value as { type?: string }).type !== 'object') continue;
      assert.ok(targeted.has(value as TSchema) || NOT_WRITTEN.has(name), `${name} is neither exercised by this test nor listed as not written`);
    }
  }
  for (const target of TARGETS) {
    const top = new Set(stringFields(target.schema as unknown as Record<string, unknown>).map((f) => f.split('.')[0]));
    for (const listed of Object.keys(target.notRendered)) assert.ok(top.has(listed), `${target.name}: ${listed} is listed as not rendered but is no string field`);
  }
});

for (const target of TARGETS) {
  const fields = stringFields(target.schema as unknown as Record<string, unknown>).filter((field) => !target.notRendered[field.split('.')[0]]);
  if (fields.length === 0) continue;
  test(`${target.name}: hostile values in ${fields.join(', ')} are refused or stay inert`, async () => {
    const outcomes = { refused400: 0, refusedByRenderer: 0, inert: 0 };
    let attempts = 0;
    for (const field of fields) {
      const reached = { ...target.base, ...(target.reach?.[field.split('.')[0]] ?? {}) };
      const harmless = getPath(reached, field);
      // Each hostile value alone, and appended to the field's harmless value (`1.2.3.4\ninclude: …`).
      const appended = typeof harmless === 'string' && harmless ? HOSTILE.map((hostile) => `${harmless}${hostile}`) : [];
      const values = target.appendOnly?.includes(field) ? appended : [...HOSTILE, ...appended];
      for (const hostile of values) {
        attempts++;
        const payload = structuredClone(reached);
        setPath(payload, field, hostile);
        const where = `${target.name} ${field}=${JSON.stringify(hostile)}`;
        const id = ids.get(target.name);
        const write = target.shape === 'singleton'
          ? await t.request('PUT', target.path, payload)
          : target.createOnly || !id
            ? await t.request('POST', target.path, payload)
            : await t.request('PUT', `${target.path}/${id}`, payload);
        if (write.statusCode === 400) {
          assert.match(json(write).error, /body\./, `${where}: the 400 names the field`);
          outcomes.refused400++;
          continue;
        }
        assert.ok(write.statusCode === 200 || write.statusCode === 201, `${where}: answered ${write.statusCode} ${write.body}`);
        try {
          const applied = await apply(target.area);
          if (applied.status === 409) {
            assert.match(applied.error ?? '', /cannot be rendered/, `${where}: a 409 must be the renderer's refusal, not a checker's (${applied.error})`);
            outcomes.refusedByRenderer++;
          } else {
            assert.equal(applied.status, 200, `${where}: apply answered ${applied.status} ${applied.error}`);
            assert.deepEqual(structure(target.area), baseline.get(target.area), `${where}: the rendered files changed structure`);
            outcomes.inert++;
          }
        } finally {
          // Put the harmless object back.
          if (target.shape === 'singleton') assert.equal((await t.request('PUT', target.path, target.base)).statusCode, 200);
          else if (target.createOnly || !id) assert.equal((await t.request('DELETE', `${target.path}/${json(write).id}`)).statusCode, 204);
          else assert.equal((await t.request('PUT', `${target.path}/${id}`, target.base)).statusCode, 200);
        }
      }
    }
    assert.equal(outcomes.refused400 + outcomes.refusedByRenderer + outcomes.inert, attempts);
    assert.ok(attempts >= fields.length * HOSTILE.length - HOSTILE.length);
  });
}

test('the blocklist renderer refuses a hostile name, redirect address, allow entry or path instead of writing it', () => {
  const zone = (names: string[], redirectIp: string | null = null) => ({ label: 'blocklist-x', action: redirectIp ? 'redirect' as const : 'nxdomain' as const, redirectIp, names });
  for (const hostile of HOSTILE) {
    assert.throws(() => renderBlocklistData([zone(['ads.example.com'], `192.0.2.1${hostile}`)], []), RenderRefusal);
    assert.throws(() => renderBlocklistData([zone([`ads.example.com${hostile}`])], []), RenderRefusal);
    assert.throws(() => renderBlocklistData([zone(['ads.example.com'])], [`good.example.com${hostile}`]), RenderRefusal);
    assert.throws(() => renderBlocklistData([{ ...zone(['ads.example.com']), label: `blocklist-x${hostile}` }], []), RenderRefusal);
    assert.throws(() => renderBlocklistFilter(`/var/lib/x.tsv${hostile}`), RenderRefusal);
  }
  assert.throws(() => renderBlocklistData([zone(['ads.example.com\tother'])], []), RenderRefusal);
});

test('the simulated platform keeps the runtime files inside the data directory', () => {
  assert.equal(existsSync(runtimeRoot({ dataDir: t.dataDir })), false);
});
